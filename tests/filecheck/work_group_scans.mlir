// PASS: work-group-scans
// CONFIG: work_items=128
// A scan on the work-group (work_group_scans.py). Cut from `tl.cumsum` of one 64-element
// row in the GPU shape (MLIR_ENABLE_DUMP, before the work-group sharing passes): the
// frontend's serial loop `for k = 1 to 64: acc += x[k]; y[k] = acc` becomes, for 64
// lanes of one element each: every lane folds its chunk into `partials[0][lid]`; six
// Hillis-Steele steps (d = 1, 2, 4, ..., 32) add the total of the lane d places back,
// between the halves of a double buffer, a barrier after each (fencing `__local` memory
// alone: only the partials are shared across them); every lane scans its chunk again
// from the total of the lanes before it and stores where the loop stored.

// CHECK-LABEL: func.func @cumsum_rows
// CHECK:       %[[LID:.*]] = gpu.thread_id x
// CHECK:       %[[X:.*]] = memref.alloc() : memref<64xf32>
// CHECK:       %[[Y:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NOT:   scf.for %{{.*}} = %c1 to %c64
// CHECK:       %[[PARTIALS:.*]] = memref.alloc() : memref<2x128xf32>
// CHECK:       %[[LANE:.*]] = arith.remui %[[LID]], %{{.*}} : index
// CHECK:       scf.if
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           memref.load %[[X]]
// CHECK:           arith.addf
// CHECK:         memref.store %{{.*}}, %[[PARTIALS]][%{{.*}}, %[[LID]]] : memref<2x128xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  gpu.barrier {opencl.local_fence}
// CHECK-COUNT-6: arith.cmpi uge, %[[LANE]]
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK:       scf.if
// CHECK:         arith.cmpi eq, %[[LANE]]
// CHECK:         memref.store %{{.*}}, %[[Y]][%{{.*}}] : memref<64xf32>
// CHECK:         scf.for {{.*}} iter_args
// CHECK:           memref.store %{{.*}}, %[[Y]][%{{.*}}] : memref<64xf32>
module {
  func.func @cumsum_rows(%arg0: memref<?xf32>, %arg1: memref<?xf32>) attributes {opencl.arg_names = ["x_ptr", "y_ptr"]} {
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c64_i32 = arith.constant 64 : i32
    %block_id_x = gpu.block_id  x
    %0 = arith.index_cast %block_id_x : index to i32
    %1 = arith.muli %0, %c64_i32 : i32
    %2 = arith.index_cast %1 : i32 to index
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [%2], sizes: [64], strides: [1] : memref<?xf32> to memref<64xf32, strided<[1], offset: ?>>
    %alloc = memref.alloc() : memref<64xf32>
    memref.copy %reinterpret_cast, %alloc : memref<64xf32, strided<[1], offset: ?>> to memref<64xf32>
    %alloc_0 = memref.alloc() : memref<64xf32>
    %3 = memref.load %alloc[%c0] : memref<64xf32>
    memref.store %3, %alloc_0[%c0] : memref<64xf32>
    %4 = scf.for %arg2 = %c1 to %c64 step %c1 iter_args(%arg3 = %3) -> (f32) {
      %5 = memref.load %alloc[%arg2] : memref<64xf32>
      %6 = arith.addf %arg3, %5 : f32
      memref.store %6, %alloc_0[%arg2] : memref<64xf32>
      scf.yield %6 : f32
    }
    %reinterpret_cast_1 = memref.reinterpret_cast %arg1 to offset: [%2], sizes: [64], strides: [1] : memref<?xf32> to memref<64xf32, strided<[1], offset: ?>>
    memref.copy %alloc_0, %reinterpret_cast_1 : memref<64xf32> to memref<64xf32, strided<[1], offset: ?>>
    return
  }
}
