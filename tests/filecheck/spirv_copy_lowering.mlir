// PASS: spirv-copy-lowering
// The SPIR-V stage's step on the copies the memref stage left as work-group async
// copies (memref_stage/copy_lowering.py, `lower_copies`): upstream's SPIR-V dialect
// has no OpGroupAsyncCopy, so they become loops.

// 64 work-items: the copy every work-item reaches is shared between barriers
// (work-item w moves elements w, w + 64, ... of the 4x8 block, split row-major).

// CHECK-LABEL: func.func @shared
// CHECK-NOT:   memref.copy
// CHECK:       gpu.barrier
// CHECK:       %[[TX:.*]] = gpu.thread_id  x
// CHECK:       %[[LID:.*]] = arith.addi %[[TX]]
// CHECK:       %[[W:.*]] = arith.muli %block_dim_x
// CHECK:       scf.for %[[E:.*]] = %[[LID]] to %c32 step %[[W]] {
// CHECK-NEXT:    %[[J:.*]] = arith.remsi %[[E]], %c8
// CHECK-NEXT:    %[[I:.*]] = arith.divsi %[[E]], %c8
// CHECK-NEXT:    %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:    memref.store %[[X]], %alloc[%[[I]], %[[J]]]
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
func.func @shared(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %tile = memref.alloc() : memref<4x8xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [4, 8], strides: [8, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[8, 1]>>
  memref.copy %src, %tile {opencl.async_work_group_copy} : memref<4x8xf32, strided<[8, 1]>> to memref<4x8xf32>
  return
}

// -----

// The same copy once the barrier analysis placed the barrier it needs before it
// (memref_stage/work_group_barriers.py: here, after the write of the tile's last
// element by work-item 0): no second barrier before it, the one after it (which
// stands for the async copy's wait, as the analysis counts on) stays.

// CHECK-LABEL: func.func @placed
// CHECK:       scf.if
// CHECK:       memref.store
// CHECK:       }
// CHECK-NEXT:  gpu.barrier
// CHECK-NOT:   gpu.barrier
// CHECK:       scf.for
// CHECK:       memref.store %{{.*}}, %[[OUT:.*]][%{{.*}}, %{{.*}}]
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier
// CHECK-NEXT:  return
func.func @placed(%x: memref<?xf32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %one = arith.constant 1.0 : f32
  %tile = memref.alloc() : memref<4x8xf32>
  %t = gpu.thread_id x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {
    memref.store %one, %tile[%c3, %c7] : memref<4x8xf32>
  } {opencl.single_work_item}
  gpu.barrier
  %dst = memref.reinterpret_cast %x to offset: [0], sizes: [4, 8], strides: [8, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[8, 1]>>
  memref.copy %tile, %dst {opencl.async_work_group_copy, opencl.copy_barriers_placed} : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  return
}

// -----

// One work-item per group: rows of 8 are too short for vectors, element loops.

// CHECK-LABEL: func.func @alone
// CHECK-NOT:   memref.copy
// CHECK-NOT:   gpu.barrier
// CHECK:       scf.for %[[R:.*]] = %{{.*}} to %c4
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %c8
// CHECK-NEXT:      %[[X:.*]] = memref.load %{{.*}}[%[[R]], %[[C]]]
// CHECK-NEXT:      memref.store %[[X]], %alloc[%[[R]], %[[C]]]
func.func @alone(%x: memref<?xf32>) {
  %tile = memref.alloc() : memref<4x8xf32>
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [4, 8], strides: [32, 1]
      : memref<?xf32> to memref<4x8xf32, strided<[32, 1]>>
  memref.copy %src, %tile {opencl.async_work_group_copy} : memref<4x8xf32, strided<[32, 1]>> to memref<4x8xf32>
  return
}
