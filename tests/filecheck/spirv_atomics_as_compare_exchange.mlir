// PASS: spirv-atomics-as-compare-exchange
// Every atomic becomes a loop around a compare-exchange on the element's bits
// (atomics.py): the new value from the current one (the atomic's kind, or its region),
// a call of a private helper per buffer type (its body is built after the conversion)
// with the buffer's address, until the old bits equal the current ones.

// CHECK:       func.func private @__atomic_cas_global_f32(%arg0: i64, %arg1: i64, %arg2: f32, %arg3: f32) -> f32
// CHECK-LABEL: func.func @k
// CHECK-NOT:   atomic_rmw
// CHECK:       %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK:       %[[FIRST:.*]] = memref.load %arg0[%arg2] : memref<?xf32>
// CHECK-NEXT:  %[[OLD:.*]] = scf.while (%[[CUR:.*]] = %[[FIRST]]) : (f32) -> f32 {
// CHECK-NEXT:    %[[NEW:.*]] = arith.addf %[[CUR]], %arg1 : f32
// CHECK-NEXT:    %[[GOT:.*]] = func.call @__atomic_cas_global_f32(%{{.*}}, %{{.*}}, %[[CUR]], %[[NEW]])
// CHECK-NEXT:    %[[GOTBITS:.*]] = arith.bitcast %[[GOT]] : f32 to i32
// CHECK-NEXT:    %[[CURBITS:.*]] = arith.bitcast %[[CUR]] : f32 to i32
// CHECK-NEXT:    %[[AGAIN:.*]] = arith.cmpi ne, %[[GOTBITS]], %[[CURBITS]] : i32
// CHECK-NEXT:    scf.condition(%[[AGAIN]]) %[[GOT]] : f32
// CHECK:       scf.while
// CHECK:         arith.maximumf %{{.*}}, %[[OLD]] : f32
// CHECK:         func.call @__atomic_cas_global_f32
func.func @k(%x: memref<?xf32>, %v: f32, %i: index) {
  %o = memref.atomic_rmw addf %v, %x[%i] : (f32, memref<?xf32>) -> f32
  %m = memref.generic_atomic_rmw %x[%i] : memref<?xf32> {
  ^bb0(%cur: f32):
    %n = arith.maximumf %cur, %o : f32
    memref.atomic_yield %n : f32
  }
  memref.store %m, %x[%i] : memref<?xf32>
  return
}

// -----

// A work-group tile's atomic calls the local helper; integers compare as they are.

// CHECK:       func.func private @__atomic_cas_local_i32
// CHECK-LABEL: func.func @local
// CHECK:       arith.maxsi
// CHECK:       %[[GOT:.*]] = func.call @__atomic_cas_local_i32
// CHECK-NEXT:  arith.cmpi ne, %[[GOT]], %{{.*}} : i32
func.func @local(%v: i32, %i: index) {
  %tile = memref.alloc() : memref<16xi32, 3>
  %o = memref.atomic_rmw maxs %v, %tile[%i] : (i32, memref<16xi32, 3>) -> i32
  return
}

// -----

// No atomics: no helper.

// CHECK-NOT:   __atomic_cas
func.func @none(%x: memref<?xf32>, %i: index) {
  %v = memref.load %x[%i] : memref<?xf32>
  memref.store %v, %x[%i] : memref<?xf32>
  return
}
