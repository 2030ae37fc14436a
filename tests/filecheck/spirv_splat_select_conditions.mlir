// PASS: spirv-splat-select-conditions
// A select of vectors on one scalar flag (elementwise_vectors.py: a `tl.where` on a
// row's flag) gets a vector condition, a splat of the flag: the SPIR-V conversion
// legalizes only selects whose condition has the result's shape (selects.py).

// CHECK-LABEL: func.func @row_flag
// CHECK:       %[[SPLAT:.*]] = vector.broadcast %arg0 : i1 to vector<4xi1>
// CHECK-NEXT:  arith.select %[[SPLAT]], %arg1, %arg2 : vector<4xi1>, vector<4xf32>
func.func @row_flag(%flag: i1, %a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %r = arith.select %flag, %a, %b : vector<4xf32>
  return %r : vector<4xf32>
}

// -----

// Selects of scalars and selects on a vector condition stay as they are.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:   vector.broadcast
// CHECK:       arith.select %arg0, %arg2, %arg2 : f32
// CHECK-NEXT:  arith.select %arg1, %arg3, %arg3 : vector<4xi1>, vector<4xf32>
func.func @left_alone(%flag: i1, %flags: vector<4xi1>, %x: f32, %v: vector<4xf32>) -> (f32, vector<4xf32>) {
  %s = arith.select %flag, %x, %x : f32
  %w = arith.select %flags, %v, %v : vector<4xi1>, vector<4xf32>
  return %s, %w : f32, vector<4xf32>
}
