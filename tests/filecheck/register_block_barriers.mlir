// PASS: register-block-barriers
// CONFIG: work_items=128 quirks=register_blocks_beside_private_loops
// Quirk register_blocks_beside_private_loops (triton_spirv/target.py;
// work_group_barriers.py): a loop distributed over the work-items that holds vector
// fmas (register blocks) gets a local-fence barrier right before and right after it
// where none stands; a barrier already there is kept alone, and loops of scalar fmas
// or not distributed stay as they are.

// CHECK-LABEL: func.func @blocks
// CHECK:       gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  scf.for
// CHECK:         math.fma {{.*}} : vector<16xf32>
// CHECK:       }
// CHECK-NEXT:  gpu.barrier {opencl.local_fence}
// CHECK-NEXT:  scf.for
// CHECK-NOT:   gpu.barrier
// CHECK:       return
func.func @blocks(%tile: memref<64x64xf32>, %private: memref<16xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %f = arith.constant 0.0 : f32
  %one = arith.constant 1 : i64
  %lid = gpu.thread_id x
  %start = arith.muli %lid, %c1 : index
  scf.for %j = %start to %c64 step %c128 {
    %acc = vector.transfer_read %tile[%j, %c0], %f : memref<64x64xf32>, vector<16xf32>
    %sum = math.fma %acc, %acc, %acc : vector<16xf32>
    vector.transfer_write %sum, %tile[%j, %c0] : vector<16xf32>, memref<64x64xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %o = memref.load %private[%i] : memref<16xi64>
    %n = arith.addi %o, %one : i64
    memref.store %n, %private[%i] : memref<16xi64>
  }
  return
}

// CHECK-LABEL: func.func @kept
// CHECK:       gpu.barrier
// CHECK-NEXT:  scf.for
// CHECK:         math.fma {{.*}} : vector<4xf32>
// CHECK:       }
// CHECK-NEXT:  gpu.barrier
// CHECK-NOT:   gpu.barrier
// CHECK:       scf.for
// CHECK:         math.fma {{.*}} : f32
// CHECK:       }
// CHECK-NEXT:  return
func.func @kept(%tile: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %f = arith.constant 0.0 : f32
  %lid = gpu.thread_id x
  gpu.barrier
  scf.for %j = %lid to %c64 step %c128 {
    %acc = vector.transfer_read %tile[%j, %c0], %f : memref<64x64xf32>, vector<4xf32>
    %sum = math.fma %acc, %acc, %acc : vector<4xf32>
    vector.transfer_write %sum, %tile[%j, %c0] : vector<4xf32>, memref<64x64xf32>
  }
  gpu.barrier
  scf.for %j = %lid to %c64 step %c128 {
    %x = memref.load %tile[%j, %c0] : memref<64x64xf32>
    %y = math.fma %x, %x, %x : f32
    memref.store %y, %tile[%j, %c0] : memref<64x64xf32>
  }
  return
}
