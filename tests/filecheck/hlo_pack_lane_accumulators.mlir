// PASS: hlo-pack-lane-accumulators
// A row-reduction loop marked hlo.lane_accumulators = 4 whose lanes compute alike
// carries one vector<4xf32> instead of 4 scalars; each lane is extracted after it.

// CHECK-LABEL: func.func @sum_lanes
// CHECK-SAME: (%[[ROW:.*]]: tensor<1024xf32>)
// CHECK:   %[[SUM:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<4xf32>) {
// CHECK-NEXT:     %[[LOAD:.*]] = vector.transfer_read %[[ROW]][%[[I]]]
// CHECK-NEXT:     %[[NEXT:.*]] = arith.addf %[[ACC]], %[[LOAD]] : vector<4xf32>
// CHECK-NEXT:     scf.yield %[[NEXT]] : vector<4xf32>
// CHECK-NEXT:   }
// CHECK-NOT: hlo.lane_accumulators
// CHECK-DAG:   %[[L0:.*]] = vector.extract %[[SUM]][0] : f32 from vector<4xf32>
// CHECK-DAG:   %[[L1:.*]] = vector.extract %[[SUM]][1] : f32 from vector<4xf32>
// CHECK-DAG:   %[[L2:.*]] = vector.extract %[[SUM]][2] : f32 from vector<4xf32>
// CHECK-DAG:   %[[L3:.*]] = vector.extract %[[SUM]][3] : f32 from vector<4xf32>
// CHECK:   return %[[L0]], %[[L1]], %[[L2]], %[[L3]]
func.func @sum_lanes(%row: tensor<1024xf32>) -> (f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %r:4 = scf.for %i = %c0 to %c1024 step %c4 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (f32, f32, f32, f32) {
    %v = vector.transfer_read %row[%i], %zero {in_bounds = [true]} : tensor<1024xf32>, vector<4xf32>
    %x0 = vector.extract %v[0] : f32 from vector<4xf32>
    %s0 = arith.addf %a0, %x0 : f32
    %x1 = vector.extract %v[1] : f32 from vector<4xf32>
    %s1 = arith.addf %a1, %x1 : f32
    %x2 = vector.extract %v[2] : f32 from vector<4xf32>
    %s2 = arith.addf %a2, %x2 : f32
    %x3 = vector.extract %v[3] : f32 from vector<4xf32>
    %s3 = arith.addf %a3, %x3 : f32
    scf.yield %s0, %s1, %s2, %s3 : f32, f32, f32, f32
  } {hlo.lane_accumulators = 4 : i64}
  return %r#0, %r#1, %r#2, %r#3 : f32, f32, f32, f32
}

// -----

// Lanes that differ (lane 3 multiplies) stay scalar.
// CHECK-LABEL: func.func @lanes_differ
// CHECK:   scf.for {{.*}} -> (f32, f32, f32, f32) {
// CHECK:     arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:   } {hlo.lane_accumulators = 4 : i64}
func.func @lanes_differ(%row: tensor<1024xf32>) -> (f32, f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %r:4 = scf.for %i = %c0 to %c1024 step %c4 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero) -> (f32, f32, f32, f32) {
    %v = vector.transfer_read %row[%i], %zero {in_bounds = [true]} : tensor<1024xf32>, vector<4xf32>
    %x0 = vector.extract %v[0] : f32 from vector<4xf32>
    %s0 = arith.addf %a0, %x0 : f32
    %x1 = vector.extract %v[1] : f32 from vector<4xf32>
    %s1 = arith.addf %a1, %x1 : f32
    %x2 = vector.extract %v[2] : f32 from vector<4xf32>
    %s2 = arith.addf %a2, %x2 : f32
    %x3 = vector.extract %v[3] : f32 from vector<4xf32>
    %s3 = arith.mulf %a3, %x3 : f32
    scf.yield %s0, %s1, %s2, %s3 : f32, f32, f32, f32
  } {hlo.lane_accumulators = 4 : i64}
  return %r#0, %r#1, %r#2, %r#3 : f32, f32, f32, f32
}
