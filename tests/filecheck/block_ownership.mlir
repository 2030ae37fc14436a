// PASS: block-ownership
// CONFIG: work_items=128
// The loops over a register-blocked accumulator take its block steps
// (block_ownership.py). Cut from a 32x32x16 `tl.dot(a, b) + 1.0` in the GPU shape
// (MLIR_ENABLE_DUMP, before block-ownership): the contraction steps by blocks of
// 4 rows x 16 columns, the fill of its accumulator by one float4. The fill's loop takes
// the steps (4, 16) and walks one block in inner loops (4 rows, 16 columns by 4), so
// that both loops hand a work-item the same blocks; the contraction stays as it is.

// CHECK-LABEL: func.func @small_dot
// CHECK:       %[[ACC:.*]] = memref.alloc() {{.*}} : memref<32x32xf32>
// CHECK:       %[[ROWS:.*]] = arith.constant 4 : index
// CHECK:       %[[COLUMNS:.*]] = arith.constant 16 : index
// CHECK:       scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%[[ROWS]], %[[COLUMNS]]) {
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[ROW:.*]] = arith.addi %[[I]], %[[R]] : index
// CHECK-NEXT:        %[[COLUMN:.*]] = arith.addi %[[J]], %[[C]] : index
// CHECK-NEXT:        vector.store %{{.*}}, %[[ACC]][%[[ROW]], %[[COLUMN]]] : memref<32x32xf32>, vector<4xf32>
// The contraction's loop already had the block steps.
// CHECK:       scf.parallel (%[[I2:.*]], %[[J2:.*]]) = ({{.*}}) to ({{.*}}) step (%c4, %c16) {
// CHECK-NEXT:    %{{.*}} = arith.addi %[[I2]], %c1 : index
// CHECK-NOT:     scf.for {{.*}} {
// CHECK:         %{{.*}}:4 = scf.for
// CHECK:         vector.store %{{.*}}, %[[ACC]][%[[I2]], %[[J2]]] : memref<32x32xf32>, vector<16xf32>
module {
  func.func @small_dot(%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: memref<?xf32>) attributes {opencl.arg_names = ["a_ptr", "b_ptr", "c_ptr"]} {
    %cst = arith.constant dense<1.000000e+00> : vector<4xf32>
    %c3 = arith.constant 3 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
    scf.parallel (%arg3, %arg4) = (%c0, %c0) to (%c32, %c32) step (%c1, %c4) {
      vector.store %cst, %alloc[%arg3, %arg4] : memref<32x32xf32>, vector<4xf32>
      scf.reduce
    }
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [32, 16], strides: [16, 1] : memref<?xf32> to memref<32x16xf32, strided<[16, 1]>>
    %alloc_0 = memref.alloc() : memref<32x16xf32>
    memref.copy %reinterpret_cast, %alloc_0 : memref<32x16xf32, strided<[16, 1]>> to memref<32x16xf32>
    scf.parallel (%arg3, %arg4) = (%c0, %c0) to (%c32, %c32) step (%c4, %c16) {
      %0 = arith.addi %arg3, %c1 : index
      %1 = arith.addi %arg3, %c2 : index
      %2 = arith.addi %arg3, %c3 : index
      %3 = vector.load %alloc[%arg3, %arg4] : memref<32x32xf32>, vector<16xf32>
      %4 = vector.load %alloc[%0, %arg4] : memref<32x32xf32>, vector<16xf32>
      %5 = vector.load %alloc[%1, %arg4] : memref<32x32xf32>, vector<16xf32>
      %6 = vector.load %alloc[%2, %arg4] : memref<32x32xf32>, vector<16xf32>
      %7:4 = scf.for %arg5 = %c0 to %c16 step %c1 iter_args(%arg6 = %3, %arg7 = %4, %arg8 = %5, %arg9 = %6) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
        %8 = memref.load %alloc_0[%arg3, %arg5] : memref<32x16xf32>
        %10 = vector.broadcast %8 : f32 to vector<16xf32>
        %11 = arith.addf %10, %arg6 : vector<16xf32>
        %12 = memref.load %alloc_0[%0, %arg5] : memref<32x16xf32>
        %13 = vector.broadcast %12 : f32 to vector<16xf32>
        %14 = arith.addf %13, %arg7 : vector<16xf32>
        %15 = memref.load %alloc_0[%1, %arg5] : memref<32x16xf32>
        %16 = vector.broadcast %15 : f32 to vector<16xf32>
        %17 = arith.addf %16, %arg8 : vector<16xf32>
        %18 = memref.load %alloc_0[%2, %arg5] : memref<32x16xf32>
        %19 = vector.broadcast %18 : f32 to vector<16xf32>
        %20 = arith.addf %19, %arg9 : vector<16xf32>
        scf.yield %11, %14, %17, %20 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      vector.store %7#0, %alloc[%arg3, %arg4] : memref<32x32xf32>, vector<16xf32>
      vector.store %7#1, %alloc[%0, %arg4] : memref<32x32xf32>, vector<16xf32>
      vector.store %7#2, %alloc[%1, %arg4] : memref<32x32xf32>, vector<16xf32>
      vector.store %7#3, %alloc[%2, %arg4] : memref<32x32xf32>, vector<16xf32>
      scf.reduce
    }
    %reinterpret_cast_3 = memref.reinterpret_cast %arg2 to offset: [0], sizes: [32, 32], strides: [32, 1] : memref<?xf32> to memref<32x32xf32, strided<[32, 1]>>
    memref.copy %alloc, %reinterpret_cast_3 : memref<32x32xf32> to memref<32x32xf32, strided<[32, 1]>>
    return
  }
}
