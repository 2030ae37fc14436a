// PASS: register-blocking
// The 8x16 accumulator of a contraction nest is held in registers: a block of 6 rows
// of vector<16xf32>, then one of the last 2 rows, carried through the k loop; one
// shared vector load of the right operand per k, one broadcast scalar of the left
// operand per row, product and sum as one fma, the sums stored once after the k loop
// to the rows they were loaded from. (Which nests are left alone:
// tests/test_register_blocking.py.)

// CHECK-LABEL: func.func @matmul
// CHECK:   %[[ACC:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK:   %[[LHS:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK:   %[[RHS:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK:   affine.for %[[J0:.*]] = 0 to 6 step 6 {
// CHECK:     affine.for %[[L0:.*]] = 0 to 16 step 16 {
// CHECK:       %[[J1:.*]] = affine.apply #map(%[[J0]])
// CHECK:       %[[C0:.*]] = affine.vector_load %[[ACC]][%[[J0]], %[[L0]]] : memref<8x16xf32>, vector<16xf32>
// CHECK:       %[[C1:.*]] = affine.vector_load %[[ACC]][%[[J1]], %[[L0]]]
// CHECK:       %[[SUMS:.*]]:6 = affine.for %[[K:.*]] = 0 to 4 iter_args(%[[A0:.*]] = %[[C0]], %[[A1:.*]] = %[[C1]], {{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT:    %[[X0:.*]] = affine.load %[[LHS]][%[[J0]], %[[K]]] : memref<8x4xf32>
// CHECK-NEXT:    %[[B:.*]] = affine.vector_load %[[RHS]][%[[K]], %[[L0]]] : memref<4x16xf32>, vector<16xf32>
// CHECK-NEXT:    %[[X0V:.*]] = vector.broadcast %[[X0]] : f32 to vector<16xf32>
// CHECK-NEXT:    %[[S0:.*]] = math.fma %[[X0V]], %[[B]], %[[A0]] : vector<16xf32>
// CHECK-NEXT:    %[[X1:.*]] = affine.load %[[LHS]][%[[J1]], %[[K]]]
// CHECK-NEXT:    %[[X1V:.*]] = vector.broadcast %[[X1]]
// CHECK-NEXT:    %[[S1:.*]] = math.fma %[[X1V]], %[[B]], %[[A1]]
// CHECK:         affine.yield %[[S0]], %[[S1]], {{.*}} : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  affine.vector_store %[[SUMS]]#0, %[[ACC]][%[[J0]], %[[L0]]] : memref<8x16xf32>, vector<16xf32>
// CHECK-NEXT:  affine.vector_store %[[SUMS]]#1, %[[ACC]][%[[J1]], %[[L0]]]
// The last two rows:
// CHECK:   affine.for %[[R0:.*]] = 6 to 8 step 2 {
// CHECK:     affine.for %[[M0:.*]] = 0 to 16 step 16 {
// CHECK:       %[[R1:.*]] = affine.apply #map(%[[R0]])
// CHECK:       %[[SUMS2:.*]]:2 = affine.for %[[K2:.*]] = 0 to 4 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT:    affine.load %[[LHS]][%[[R0]], %[[K2]]]
// CHECK-NEXT:    affine.vector_load %[[RHS]][%[[K2]], %[[M0]]]
// CHECK:         math.fma
// CHECK:         affine.load %[[LHS]][%[[R1]], %[[K2]]]
// CHECK:         math.fma
// CHECK:       affine.vector_store %[[SUMS2]]#0, %[[ACC]][%[[R0]], %[[M0]]]
// CHECK-NEXT:  affine.vector_store %[[SUMS2]]#1, %[[ACC]][%[[R1]], %[[M0]]]
// CHECK-NOT: affine.store
// CHECK-NOT: arith.mulf
func.func @matmul() {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x4xf32>
  %rhs = memref.alloc() : memref<4x16xf32>
  affine.for %j = 0 to 8 {
    affine.for %k = 0 to 4 {
      affine.for %l = 0 to 16 {
        %a = affine.load %lhs[%j, %k] : memref<8x4xf32>
        %b = affine.load %rhs[%k, %l] : memref<4x16xf32>
        %c = affine.load %acc[%j, %l] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<8x16xf32>
      }
    }
  }
  return
}
