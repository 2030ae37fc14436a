// PASS: hlo-unroll-vector-loops
// The loop emitter's hlo.vector_loop (constant bounds, 2-4 iterations) is unrolled:
// the body once per iteration, the carried value threaded through the copies.

// CHECK-LABEL: func.func @vector_loop
// CHECK-SAME: (%[[T:.*]]: tensor<64xf32>, %[[BASE:.*]]: index, %[[X:.*]]: f32)
// CHECK-NOT: scf.for
// CHECK:   %[[I0:.*]] = tensor.insert %[[X]] into %[[T]][%[[BASE]]]
// CHECK:   %[[P1:.*]] = arith.addi %[[BASE]], %c1
// CHECK:   %[[I1:.*]] = tensor.insert %[[X]] into %[[I0]][%[[P1]]]
// CHECK:   %[[P2:.*]] = arith.addi %[[BASE]], %c2
// CHECK:   %[[I2:.*]] = tensor.insert %[[X]] into %[[I1]][%[[P2]]]
// CHECK:   %[[P3:.*]] = arith.addi %[[BASE]], %c3
// CHECK:   %[[I3:.*]] = tensor.insert %[[X]] into %[[I2]][%[[P3]]]
// CHECK:   return %[[I3]]
func.func @vector_loop(%t: tensor<64xf32>, %base: index, %x: f32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (tensor<64xf32>) {
    %p = arith.addi %base, %k : index
    %u = tensor.insert %x into %acc[%p] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  } {hlo.vector_loop = 4 : i64}
  return %r : tensor<64xf32>
}

// -----

// Loops without the attribute, and marked loops with bounds that are not constants,
// stay loops.
// CHECK-LABEL: func.func @other_loops
// CHECK:   scf.for
// CHECK:   scf.for
// CHECK:   } {hlo.vector_loop = 4 : i64}
func.func @other_loops(%t: tensor<64xf32>, %n: index, %x: f32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (tensor<64xf32>) {
    %u = tensor.insert %x into %acc[%k] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  }
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %r) -> (tensor<64xf32>) {
    %u = tensor.insert %x into %acc[%k] : tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  } {hlo.vector_loop = 4 : i64}
  return %s : tensor<64xf32>
}
