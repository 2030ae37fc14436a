// PASS: spirv-bf16-as-i16
// bf16 buffers become i16 buffers (SPIR-V 1.0 has no bfloat16; half_types.py): a load
// is an i16 load and a bitcast to bf16, a store a bitcast to i16 and an i16 store. f16
// and bf16 scalar arguments arrive as float (the launcher's ABI): f32, truncated at
// the entry.

// CHECK-LABEL: func.func @k(%arg0: memref<?xi16>, %arg1: f32)
// CHECK-NEXT:  %[[H:.*]] = arith.truncf %arg1 : f32 to f16
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<8xi16, 3>
// CHECK-NEXT:  %[[BITS:.*]] = memref.load %arg0[%c0] : memref<?xi16>
// CHECK-NEXT:  %[[V:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK-NEXT:  %[[VB:.*]] = arith.bitcast %[[V]] : bf16 to i16
// CHECK-NEXT:  memref.store %[[VB]], %[[TILE]][%c0] : memref<8xi16, 3>
// CHECK-NEXT:  arith.extf %[[V]] : bf16 to f32
// CHECK-NEXT:  arith.extf %[[H]] : f16 to f32
// CHECK:       %[[B:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:  %[[BB:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK-NEXT:  memref.store %[[BB]], %arg0[%c0] : memref<?xi16>
func.func @k(%x: memref<?xbf16>, %s: f16) {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<8xbf16, 3>
  %v = memref.load %x[%c0] : memref<?xbf16>
  memref.store %v, %tile[%c0] : memref<8xbf16, 3>
  %w = arith.extf %v : bf16 to f32
  %h = arith.extf %s : f16 to f32
  %sum = arith.addf %w, %h : f32
  %b = arith.truncf %sum : f32 to bf16
  memref.store %b, %x[%c0] : memref<?xbf16>
  return
}

// -----

// A bf16 value a branch yields (a masked load's element) is carried as i16, with
// bitcasts at the yields and after the branch.

// CHECK-LABEL: func.func @carried(%arg0: memref<?xi16>, %arg1: i1, %arg2: f32)
// CHECK-NEXT:  %[[OTHER:.*]] = arith.truncf %arg2 : f32 to bf16
// CHECK:       %[[R:.*]] = scf.if %arg1 -> (i16) {
// CHECK:         %[[L:.*]] = arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NEXT:    %[[LB:.*]] = arith.bitcast %[[L]] : bf16 to i16
// CHECK-NEXT:    scf.yield %[[LB]] : i16
// CHECK-NEXT:  } else {
// CHECK-NEXT:    %[[OB:.*]] = arith.bitcast %[[OTHER]] : bf16 to i16
// CHECK-NEXT:    scf.yield %[[OB]] : i16
// CHECK-NEXT:  }
// CHECK-NEXT:  arith.bitcast %[[R]] : i16 to bf16
func.func @carried(%x: memref<?xbf16>, %mask: i1, %other: bf16) -> bf16 {
  %c0 = arith.constant 0 : index
  %v = scf.if %mask -> (bf16) {
    %l = memref.load %x[%c0] : memref<?xbf16>
    scf.yield %l : bf16
  } else {
    scf.yield %other : bf16
  }
  return %v : bf16
}

// -----

// No bf16: nothing changes (f16 buffers and f32 scalars stay).

// CHECK-LABEL: func.func @none(%arg0: memref<?xf16>, %arg1: f32,
// CHECK-NEXT:  memref.load %arg0[%arg2] : memref<?xf16>
// CHECK-NOT:   arith.bitcast
func.func @none(%x: memref<?xf16>, %s: f32, %i: index) -> f16 {
  %v = memref.load %x[%i] : memref<?xf16>
  return %v : f16
}
