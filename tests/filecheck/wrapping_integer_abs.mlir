// PASS: wrapping-integer-abs
// CONFIG: quirks=abs_of_int_min_poison
// Under PoCL's quirk abs_of_int_min_poison (memref_stage/integer_abs.py): integer
// absolute values, scalar and vector, become `max(x, 0 - x)` (the emitter prints the
// subtraction wrapping), so the optimizer never sees OpenCL C's abs; a max rather than
// a select, which LLVM would turn back into `llvm.abs` (Oclgrind lacks it).

// CHECK-LABEL: func.func @absolutes
// CHECK-NOT:   math.absi
// CHECK:       %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:  %[[MINUS:.*]] = arith.subi %[[ZERO]], %arg0 : i32
// CHECK-NEXT:  arith.maxsi %arg0, %[[MINUS]] : i32
// CHECK:       %[[VZERO:.*]] = arith.constant dense<0> : vector<16xi8>
// CHECK-NEXT:  %[[VMINUS:.*]] = arith.subi %[[VZERO]], %arg1 : vector<16xi8>
// CHECK-NEXT:  arith.maxsi %arg1, %[[VMINUS]] : vector<16xi8>
// CHECK-NOT:   math.absi
// CHECK:       math.absf
func.func @absolutes(%x: i32, %v: vector<16xi8>, %f: f32) -> (i32, vector<16xi8>, f32) {
  %a = math.absi %x : i32
  %b = math.absi %v : vector<16xi8>
  %c = math.absf %f : f32
  return %a, %b, %c : i32, vector<16xi8>, f32
}
