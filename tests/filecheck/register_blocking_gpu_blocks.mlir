// PASS: register-blocking
// CONFIG: work_items=128
// GPU shape: the register blocks follow the work-group (register_blocking.py,
// gpu_block). A 64x64 accumulator over 128 work-items is 128 blocks of 4 rows by
// vector<8xf32> (32 elements each, one block per work-item), one loop of row blocks
// with no remainder; a 16x16 accumulator has fewer elements than two per work-item:
// blocks of one row by vector<2xf32>, 128 of them.

// CHECK-LABEL: func.func @matmul_64x64
// CHECK:   %[[ACC:.*]] = memref.alloc() : memref<64x64xf32>
// CHECK:   %[[LHS:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK:   %[[RHS:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK:   affine.for %[[J0:.*]] = 0 to 64 step 4 {
// CHECK-NEXT:   affine.for %[[L0:.*]] = 0 to 64 step 8 {
// CHECK:       %[[C0:.*]] = affine.vector_load %[[ACC]][%[[J0]], %[[L0]]] : memref<64x64xf32>, vector<8xf32>
// CHECK:       %[[SUMS:.*]]:4 = affine.for %[[K:.*]] = 0 to 32 iter_args(%[[A0:.*]] = %[[C0]], {{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT:    %[[X0:.*]] = affine.load %[[LHS]][%[[J0]], %[[K]]] : memref<64x32xf32>
// CHECK-NEXT:    %[[B:.*]] = affine.vector_load %[[RHS]][%[[K]], %[[L0]]] : memref<32x64xf32>, vector<8xf32>
// CHECK-NEXT:    %[[X0V:.*]] = vector.broadcast %[[X0]] : f32 to vector<8xf32>
// CHECK-NEXT:    math.fma %[[X0V]], %[[B]], %[[A0]] : vector<8xf32>
// CHECK:       affine.vector_store %[[SUMS]]#0, %[[ACC]][%[[J0]], %[[L0]]] : memref<64x64xf32>, vector<8xf32>
// CHECK-COUNT-3: affine.vector_store %[[SUMS]]
// CHECK-NOT: affine.for {{.*}} = 64 to
// CHECK-NOT: affine.store
func.func @matmul_64x64() {
  %acc = memref.alloc() : memref<64x64xf32>
  %lhs = memref.alloc() : memref<64x32xf32>
  %rhs = memref.alloc() : memref<32x64xf32>
  affine.for %j = 0 to 64 {
    affine.for %k = 0 to 32 {
      affine.for %l = 0 to 64 {
        %a = affine.load %lhs[%j, %k] : memref<64x32xf32>
        %b = affine.load %rhs[%k, %l] : memref<32x64xf32>
        %c = affine.load %acc[%j, %l] : memref<64x64xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<64x64xf32>
      }
    }
  }
  return
}

// -----

// CHECK-LABEL: func.func @matmul_16x16
// CHECK:   affine.for %[[J0:.*]] = 0 to 16 {
// CHECK-NEXT:   affine.for %[[L0:.*]] = 0 to 16 step 2 {
// CHECK:       affine.for %{{.*}} = 0 to 16 iter_args(%{{.*}} = %{{.*}}) -> (vector<2xf32>) {
// CHECK:         math.fma {{.*}} : vector<2xf32>
// CHECK:       affine.vector_store {{.*}} : memref<16x16xf32>, vector<2xf32>
// CHECK-NOT: affine.store
func.func @matmul_16x16() {
  %acc = memref.alloc() : memref<16x16xf32>
  %lhs = memref.alloc() : memref<16x16xf32>
  %rhs = memref.alloc() : memref<16x16xf32>
  affine.for %j = 0 to 16 {
    affine.for %k = 0 to 16 {
      affine.for %l = 0 to 16 {
        %a = affine.load %lhs[%j, %k] : memref<16x16xf32>
        %b = affine.load %rhs[%k, %l] : memref<16x16xf32>
        %c = affine.load %acc[%j, %l] : memref<16x16xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<16x16xf32>
      }
    }
  }
  return
}
