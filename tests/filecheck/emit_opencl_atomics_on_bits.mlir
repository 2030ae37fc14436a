// PASS: emit-opencl
// A generic atomic on an f32 or f64 whose body only combines the element's bits with
// an integer operand (Triton's float max/min: an integer max on the bits of
// non-negative values, an unsigned min on those of negative ones) is that integer
// builtin on the element's bits (64-bit `atom_` ones for f64), no compare-exchange
// loop (emitter_opencl/atomics.py); a body doing float arithmetic keeps the loop. An old value nobody reads is not
// defined: the call is a statement.

// CHECK-LABEL: __kernel void k(
// CHECK:       float old = as_float(atomic_max((volatile __global int*)(arg0 + 3), (int)arg1));
// CHECK-NEXT:  float old_1 = as_float(atomic_min((volatile __global uint*)(arg0 + 3), (uint)arg1));
// CHECK-NEXT:  atomic_max((volatile __global int*)(arg0 + 3), (int)arg1);
// CHECK-NEXT:  double old_2 = as_double(atom_min((volatile __global ulong*)(arg3 + 1), (ulong)arg4));
// CHECK-NOT:   atomic_max
// CHECK:       atomic_cmpxchg
// CHECK:       while (1)
func.func @k(%x: memref<?xf32>, %bits: i32, %y: f32, %z: memref<?xf64>, %wide: i64) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %max = memref.generic_atomic_rmw %x[%c3] : memref<?xf32> {
  ^bb0(%current: f32):
    %current_bits = arith.bitcast %current : f32 to i32
    %larger = arith.maxsi %current_bits, %bits : i32
    %new = arith.bitcast %larger : i32 to f32
    memref.atomic_yield %new : f32
  }
  %min = memref.generic_atomic_rmw %x[%c3] : memref<?xf32> {
  ^bb0(%current: f32):
    %current_bits = arith.bitcast %current : f32 to i32
    %smaller = arith.minui %bits, %current_bits : i32
    %new = arith.bitcast %smaller : i32 to f32
    memref.atomic_yield %new : f32
  }
  %unread = memref.generic_atomic_rmw %x[%c3] : memref<?xf32> {
  ^bb0(%current: f32):
    %current_bits = arith.bitcast %current : f32 to i32
    %larger = arith.maxsi %current_bits, %bits : i32
    %new = arith.bitcast %larger : i32 to f32
    memref.atomic_yield %new : f32
  }
  %dmin = memref.generic_atomic_rmw %z[%c1] : memref<?xf64> {
  ^bb0(%current: f64):
    %current_bits = arith.bitcast %current : f64 to i64
    %smaller = arith.minui %current_bits, %wide : i64
    %new = arith.bitcast %smaller : i64 to f64
    memref.atomic_yield %new : f64
  }
  memref.store %dmin, %z[%c1] : memref<?xf64>
  %sum = memref.generic_atomic_rmw %x[%c3] : memref<?xf32> {
  ^bb0(%current: f32):
    %added = arith.addf %current, %y : f32
    memref.atomic_yield %added : f32
  }
  %a = arith.addf %max, %min : f32
  %b = arith.addf %a, %sum : f32
  memref.store %b, %x[%c3] : memref<?xf32>
  return
}
