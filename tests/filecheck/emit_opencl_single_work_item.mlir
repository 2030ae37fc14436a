// PASS: emit-opencl
// A section only work-item 0 runs (memref_stage/single_work_item.py: an scf.if on the
// work-item id marked opencl.single_work_item) is an `if` on get_local_id(0) == 0,
// with the barrier after it outside.

// CHECK-LABEL: __kernel void k(
// CHECK:       long [[LID:.*]] = get_local_id(0);
// CHECK-NEXT:  bool [[FIRST:.*]] = [[LID]] == 0;
// CHECK-NEXT:  if ([[FIRST]]) {
// CHECK-NEXT:    tile0[0] = arg1;
// CHECK-NEXT:  }
// CHECK-NEXT:  barrier(CLK_LOCAL_MEM_FENCE);
// CHECK-NEXT:  float [[V:.*]] = tile0[0];
// CHECK-NEXT:  arg0{{\[}}[[LID]]] = [[V]];
func.func @k(%x: memref<?xf32>, %a: f32) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<1xf32>
  %t = gpu.thread_id x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {
    memref.store %a, %tile[%c0] : memref<1xf32>
  } {opencl.single_work_item}
  gpu.barrier {opencl.local_fence}
  %v = memref.load %tile[%c0] : memref<1xf32>
  memref.store %v, %x[%t] : memref<?xf32>
  return
}
