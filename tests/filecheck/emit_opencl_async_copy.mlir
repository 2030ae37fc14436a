// PASS: emit-opencl
// A copy the memref stage marked as a work-group async copy
// (memref_stage/copy_lowering.py) prints as async_work_group_copy, one per row, then
// its wait; a barrier first, since work-items may still read the tile
// (emitter_opencl/memory.py).

// CHECK-LABEL: __kernel void shared(
// CHECK:       barrier(CLK_LOCAL_MEM_FENCE);
// CHECK-NEXT:  event_t [[EV:.*]] = 0;
// CHECK-NEXT:  for (long [[R:.*]] = 0; [[R]] < 4; ++[[R]]) {
// CHECK-NEXT:    [[EV]] = async_work_group_copy(tile0 + [[R]] * 8, arg0 + [[R]] * 16, 8, [[EV]]);
// CHECK-NEXT:  }
// CHECK-NEXT:  wait_group_events(1, &[[EV]]);
func.func @shared(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %tile = memref.alloc() : memref<4x8xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [4, 8], strides: [16, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[16, 1]>>
  memref.copy %src, %tile {opencl.async_work_group_copy} : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
  return
}

// -----

// One work-item per group: no one to wait for, no barrier; a contiguous tile is one copy.

// CHECK-LABEL: __kernel void alone(
// CHECK-NOT:   barrier
// CHECK:       event_t [[EV:.*]] = async_work_group_copy(tile0, arg0, 32, 0);
// CHECK-NEXT:  wait_group_events(1, &[[EV]]);
func.func @alone(%x: memref<?xf32>) {
  %tile = memref.alloc() : memref<32xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [32], strides: [1]
      : memref<?xf32> to memref<32xf32, strided<[1]>>
  memref.copy %src, %tile {opencl.async_work_group_copy} : memref<32xf32, strided<[1]>> to memref<32xf32>
  return
}
