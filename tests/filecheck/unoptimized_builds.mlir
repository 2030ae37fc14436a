// PASS: unoptimized-builds
// CONFIG: quirks=not_then_integer_max
// Quirk not_then_integer_max (triton_spirv/target.py; unoptimized_builds.py): a function
// holding a bitwise not of an integer (an xor with all ones) and an integer max or min
// is marked opencl.unoptimized_build; one with only either, or with an i1 not (a
// mask's negation), is not.

// CHECK-LABEL: func.func @not_then_max
// CHECK-SAME:  attributes {opencl.unoptimized_build}
func.func @not_then_max(%x: i32, %y: i32) -> i32 {
  %ones = arith.constant -1 : i32
  %n = arith.xori %x, %ones : i32
  %m = arith.maxsi %n, %y : i32
  return %m : i32
}

// CHECK-LABEL: func.func @vector_not_then_min
// CHECK-SAME:  attributes {opencl.unoptimized_build}
func.func @vector_not_then_min(%x: vector<4xi8>, %y: vector<4xi8>) -> vector<4xi8> {
  %ones = arith.constant dense<-1> : vector<4xi8>
  %n = arith.xori %x, %ones : vector<4xi8>
  %m = arith.minui %n, %y : vector<4xi8>
  return %m : vector<4xi8>
}

// CHECK-LABEL: func.func @max_alone
// CHECK-NOT:   opencl.unoptimized_build
// CHECK:       return
func.func @max_alone(%x: i32, %y: i32, %c: i1) -> i32 {
  %true = arith.constant true
  %not_c = arith.xori %c, %true : i1
  %m = arith.maxsi %x, %y : i32
  %s = arith.select %not_c, %m, %x : i32
  return %s : i32
}
