// PASS: spirv-clean-up
// The upstream passes after the rewrites (lower.py, CLEANUP): bf16 arithmetic computed
// in f32 and bf16 <-> f32 conversions as integer bit operations (half_types.py's
// BF16_PASSES), after which the bitcasts around i16 loads and stores fold away; then
// expansions of math ops without an OpenCL SPIR-V pattern (exp2 here), folding and
// hoisting.

// CHECK-LABEL: func.func @bf16_add
// CHECK-NOT:   bf16
// CHECK:       %[[A:.*]] = memref.load %arg0[%arg1] : memref<?xi16>
// CHECK:       arith.extui %[[A]] : i16 to i32
// CHECK:       arith.shli
// CHECK:       arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:       arith.shrui
// CHECK:       %[[R:.*]] = arith.trunci %{{.*}} : i32 to i16
// CHECK-NEXT:  %[[NAN:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R]] : i16
// CHECK-NEXT:  memref.store %[[NAN]], %arg0[%arg1] : memref<?xi16>
func.func @bf16_add(%x: memref<?xi16>, %i: index) {
  %bits = memref.load %x[%i] : memref<?xi16>
  %v = arith.bitcast %bits : i16 to bf16
  %s = arith.addf %v, %v : bf16
  %out = arith.bitcast %s : bf16 to i16
  memref.store %out, %x[%i] : memref<?xi16>
  return
}

// -----

// exp2(a) = exp(a ln 2), hoisted out of the loop that does not change it.

// CHECK-LABEL: func.func @hoisted
// CHECK:       %[[LN2:.*]] = arith.constant 0.69314718055994529 : f64
// CHECK:       %[[Y:.*]] = arith.mulf %arg1, %[[LN2]] : f64
// CHECK-NEXT:  %[[E:.*]] = math.exp %[[Y]] : f64
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    memref.store %[[E]], %arg0
// CHECK-NOT:   math.exp2
func.func @hoisted(%x: memref<?xf64>, %a: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %e = math.exp2 %a : f64
    memref.store %e, %x[%i] : memref<?xf64>
  }
  return
}
