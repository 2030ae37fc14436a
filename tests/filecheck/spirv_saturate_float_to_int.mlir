// PASS: spirv-saturate-float-to-int
// The memref stage's fptosi/fptoui saturate (the emitter prints convert_<T>_sat);
// SPIR-V's conversions are undefined out of range, so each becomes
// x != x ? 0 : x >= 2^bits ? MAX : x < MIN ? MIN : fptosi(x) (casts.py).

// CHECK-LABEL: func.func @signed
// CHECK-NEXT:  %[[I:.*]] = arith.fptosi %arg0 : f32 to i32
// CHECK-NEXT:  %[[TWO31:.*]] = arith.constant 2.14748365E+9 : f32
// CHECK-NEXT:  %[[BIG:.*]] = arith.cmpf oge, %arg0, %[[TWO31]] : f32
// CHECK-NEXT:  %[[MINF:.*]] = arith.constant -2.14748365E+9 : f32
// CHECK-NEXT:  %[[SMALL:.*]] = arith.cmpf olt, %arg0, %[[MINF]] : f32
// CHECK-NEXT:  %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK-NEXT:  %[[MAX:.*]] = arith.constant 2147483647 : i32
// CHECK-NEXT:  %[[HIGH:.*]] = arith.select %[[BIG]], %[[MAX]], %[[I]] : i32
// CHECK-NEXT:  %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:  %[[LOW:.*]] = arith.select %[[SMALL]], %[[MIN]], %[[HIGH]] : i32
// CHECK-NEXT:  %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:  %[[R:.*]] = arith.select %[[NAN]], %[[ZERO]], %[[LOW]] : i32
// CHECK-NEXT:  return %[[R]] : i32
func.func @signed(%f: f32) -> i32 {
  %i = arith.fptosi %f : f32 to i32
  return %i : i32
}

// -----

// Unsigned: [0, 255] for i8 (255 is -1 as a signless constant).

// CHECK-LABEL: func.func @unsigned
// CHECK-NEXT:  arith.fptoui %arg0 : f64 to i8
// CHECK-NEXT:  arith.constant 2.560000e+02 : f64
// CHECK:       arith.constant 0.000000e+00 : f64
// CHECK:       arith.constant -1 : i8
// CHECK-COUNT-3: arith.select
func.func @unsigned(%f: f64) -> i8 {
  %i = arith.fptoui %f : f64 to i8
  return %i : i8
}

// -----

// Conversions to i1, and of vectors: not rewritten (scalar conversions to wider
// integers only).

// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:  arith.fptosi %arg0 : f32 to i1
// CHECK-NEXT:  arith.fptosi %arg1 : vector<4xf32> to vector<4xi32>
// CHECK-NOT:   arith.select
func.func @left_alone(%f: f32, %v: vector<4xf32>) -> (i1, vector<4xi32>) {
  %b = arith.fptosi %f : f32 to i1
  %w = arith.fptosi %v : vector<4xf32> to vector<4xi32>
  return %b, %w : i1, vector<4xi32>
}
