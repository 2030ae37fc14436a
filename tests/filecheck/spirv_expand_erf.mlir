// PASS: spirv-expand-erf
// f32 erf (scalar and vector) becomes the OpenCL C emitter's own formula, op for op
// (erf.py): x + x P(x^2) up to |x| = 0.927734375, 1 - e^Q(|x|) with x's sign above;
// f64 keeps math.erf (the driver's, as the emitter's double helper does).

// CHECK-LABEL: func.func @erf
// CHECK:       %[[T:.*]] = math.absf %arg0 : f32
// CHECK:       math.exp
// CHECK:       math.copysign %{{.*}}, %arg0 : f32
// CHECK:       %[[LIMIT:.*]] = arith.constant 0.927734375 : f32
// CHECK-NEXT:  %[[LARGE:.*]] = arith.cmpf ogt, %[[T]], %[[LIMIT]] : f32
// CHECK-NEXT:  arith.select %[[LARGE]]
// CHECK:       math.absf %arg1 : vector<2xf32>
// CHECK:       arith.constant dense<0.927734375> : vector<2xf32>
// CHECK:       math.erf %arg2 : f64
// CHECK-NOT:   math.erf
func.func @erf(%x: f32, %v: vector<2xf32>, %d: f64) -> (f32, vector<2xf32>, f64) {
  %e = math.erf %x : f32
  %u = math.erf %v : vector<2xf32>
  %w = math.erf %d : f64
  return %e, %u, %w : f32, vector<2xf32>, f64
}
