// PASS: spirv-calls-to-stand-ins
// Math ops and libdevice builtins that are one OpenCL.std instruction without an op of
// the spirv dialect become calls of private stand-ins named by the instruction's
// number and the operand types (opencl_std.py); after the conversion each call becomes
// that instruction. The libdevice declaration no call is left to goes.

// CHECK-DAG:   func.func private @opencl_std_32_hypot_f32_f32(%arg0: f32, %arg1: f32) -> f32 {
// CHECK-DAG:   func.func private @"opencl_std_22_expm1_vector<4xf32>"(%arg0: vector<4xf32>) -> vector<4xf32>
// CHECK-NOT:   func.func private @opencl_hypot
// CHECK-LABEL: func.func @k
// CHECK:       call @"opencl_std_22_expm1_vector<4xf32>"(%arg1) : (vector<4xf32>) -> vector<4xf32>
// CHECK:       call @opencl_std_32_hypot_f32_f32(%arg0, %arg0) : (f32, f32) -> f32
// CHECK-NOT:   math.expm1
module {
  func.func private @opencl_hypot_f32_f32_f32(f32, f32) -> f32
  func.func @k(%x: f32, %v: vector<4xf32>) -> (vector<4xf32>, f32) {
    %e = math.expm1 %v : vector<4xf32>
    %h = func.call @opencl_hypot_f32_f32_f32(%x, %x) {opencl.call = "hypot"} : (f32, f32) -> f32
    return %e, %h : vector<4xf32>, f32
  }
}

// -----

// Ops with a spirv op (math.exp) and builtins of mixed operand types (ldexp) stay.

// CHECK-NOT:   opencl_std_
// CHECK:       func.func private @opencl_ldexp_f32_i32_f32(f32, i32) -> f32
// CHECK-LABEL: func.func @left_alone
// CHECK:       math.exp %arg0 : f32
// CHECK:       call @opencl_ldexp_f32_i32_f32(%arg0, %arg1) {opencl.call = "ldexp"}
module {
  func.func private @opencl_ldexp_f32_i32_f32(f32, i32) -> f32
  func.func @left_alone(%x: f32, %n: i32) -> (f32, f32) {
    %e = math.exp %x : f32
    %l = func.call @opencl_ldexp_f32_i32_f32(%x, %n) {opencl.call = "ldexp"} : (f32, i32) -> f32
    return %e, %l : f32, f32
  }
}
