// PASS: spirv-expand-tanh
// f32 tanh (scalar and vector) becomes the OpenCL C emitter's own formula, op for op
// (tanh.py): exact +-1 in the tails, the same in both program formats; f64 keeps
// math.tanh (the driver's, as the emitter's double helper does).

// CHECK-LABEL: func.func @tanh
// CHECK:       %[[A:.*]] = math.absf %arg0 : f32
// CHECK:       %[[SMALL:.*]] = arith.constant 0.899999976 : f32
// CHECK-NEXT:  arith.cmpf oge, %[[A]], %[[SMALL]] : f32
// CHECK:       arith.constant 9.500000e+00 : f32
// CHECK:       arith.constant 0x4B400000 : f32
// CHECK:       arith.fptosi %{{.*}} : f32 to i32
// CHECK:       %[[SIGN:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:  %[[S:.*]] = arith.andi %{{.*}}, %[[SIGN]] : i32
// CHECK:       arith.ori %{{.*}}, %[[S]] : i32
// CHECK:       math.absf %arg1 : vector<4xf32>
// CHECK:       arith.constant dense<9.500000e+00> : vector<4xf32>
// CHECK:       arith.fptosi %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK-NOT:   math.tanh %arg1
// CHECK:       math.tanh %arg2 : f64
func.func @tanh(%x: f32, %v: vector<4xf32>, %d: f64) -> (f32, vector<4xf32>, f64) {
  %t = math.tanh %x : f32
  %u = math.tanh %v : vector<4xf32>
  %w = math.tanh %d : f64
  return %t, %u, %w : f32, vector<4xf32>, f64
}
