// PASS: spirv-expand-trunc
// `math.trunc` has no OpenCL SPIR-V pattern: x < 0 ? ceil(x) : floor(x) (casts.py),
// on scalars and vectors.

// CHECK-LABEL: func.func @trunc
// CHECK-NOT:   math.trunc
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[NEG:.*]] = arith.cmpf olt, %arg0, %[[ZERO]] : f32
// CHECK-NEXT:  %[[UP:.*]] = math.ceil %arg0 : f32
// CHECK-NEXT:  %[[DOWN:.*]] = math.floor %arg0 : f32
// CHECK-NEXT:  arith.select %[[NEG]], %[[UP]], %[[DOWN]] : f32
// CHECK:       %[[VZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf64>
// CHECK-NEXT:  %[[VNEG:.*]] = arith.cmpf olt, %arg1, %[[VZERO]] : vector<4xf64>
// CHECK:       arith.select %[[VNEG]], %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xf64>
func.func @trunc(%x: f32, %v: vector<4xf64>) -> (f32, vector<4xf64>) {
  %t = math.trunc %x : f32
  %u = math.trunc %v : vector<4xf64>
  return %t, %u : f32, vector<4xf64>
}

// -----

// Other rounding ops stay.

// CHECK-LABEL: func.func @others
// CHECK-NEXT:  math.floor %arg0 : f32
// CHECK-NEXT:  math.round %arg0 : f32
// CHECK-NOT:   arith.select
func.func @others(%x: f32) -> (f32, f32) {
  %f = math.floor %x : f32
  %r = math.round %x : f32
  return %f, %r : f32, f32
}
