// PASS: spirv-expand-signed-remainders
// `arith.remsi` as the remainder of the magnitudes, negated where the dividend is
// negative (casts.py): upstream's OpenCL pattern tests the sign as `a == s_abs(a)`,
// which the most negative integer passes, so INT_MIN % 3 came out 2. On scalars and
// vectors; other integer ops stay.

// CHECK-LABEL: func.func @remainders
// CHECK-NOT:   arith.remsi
// CHECK:       %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:  %[[NEG:.*]] = arith.cmpi slt, %arg0, %[[ZERO]] : i32
// CHECK:       %[[R:.*]] = arith.remui %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:  %[[MINUS:.*]] = arith.subi %[[ZERO]], %[[R]] : i32
// CHECK-NEXT:  arith.select %[[NEG]], %[[MINUS]], %[[R]] : i32
// CHECK:       %[[VZERO:.*]] = arith.constant dense<0> : vector<4xi64>
// CHECK-NEXT:  arith.cmpi slt, %arg2, %[[VZERO]] : vector<4xi64>
// CHECK:       arith.remui %{{.*}}, %{{.*}} : vector<4xi64>
// CHECK-NOT:   arith.remsi
func.func @remainders(%a: i32, %b: i32, %v: vector<4xi64>, %w: vector<4xi64>) -> (i32, vector<4xi64>) {
  %r = arith.remsi %a, %b : i32
  %s = arith.remsi %v, %w : vector<4xi64>
  return %r, %s : i32, vector<4xi64>
}

// -----

// Unsigned remainders and signed divisions stay.

// CHECK-LABEL: func.func @others
// CHECK-NEXT:  arith.remui %arg0, %arg1 : i32
// CHECK-NEXT:  arith.divsi %arg0, %arg1 : i32
// CHECK-NOT:   arith.select
func.func @others(%a: i32, %b: i32) -> (i32, i32) {
  %r = arith.remui %a, %b : i32
  %q = arith.divsi %a, %b : i32
  return %r, %q : i32, i32
}
