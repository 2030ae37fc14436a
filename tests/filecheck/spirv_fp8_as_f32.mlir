// PASS: spirv-fp8-as-f32
// fp8 buffers hold i8 bit patterns and fp8 values are the f32 values of the format, as
// in the OpenCL C emitter (fp8.py): a load decodes its byte, an extf from fp8 is the
// value itself, a store encodes (rounding to nearest even first).

// CHECK-LABEL: func.func @load_store(%arg0: memref<?xi8>, %arg1: memref<?xf32>, %arg2: memref<?xi8>)
// CHECK-NOT:   f8E
// CHECK:       %[[BYTE:.*]] = memref.load %arg0[%c0] : memref<?xi8>
// CHECK-NEXT:  arith.extui %[[BYTE]] : i8 to i32
// CHECK:       memref.store %[[V:.*]], %arg1[%c0] : memref<?xf32>
// CHECK:       math.roundeven
// CHECK:       %[[BITS:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK:       memref.store %{{.*}}, %arg2[%c0] : memref<?xi8>
// CHECK-NOT:   f8E
func.func @load_store(%x: memref<?xf8E5M2>, %y: memref<?xf32>, %z: memref<?xf8E4M3FN>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf8E5M2>
  %w = arith.extf %v : f8E5M2 to f32
  memref.store %w, %y[%c0] : memref<?xf32>
  %t = arith.truncf %w : f32 to f8E4M3FN
  memref.store %t, %z[%c0] : memref<?xf8E4M3FN>
  return
}

// -----

// truncf toward zero rounds with math.trunc; an fp8 constant is its f32 value; a tile
// of fp8 holds bytes.

// CHECK-LABEL: func.func @rounding
// CHECK:       memref.alloc() : memref<8xi8, 3>
// CHECK:       arith.constant 1.000000e+00 : f32
// CHECK:       math.trunc
// CHECK-NOT:   f8E
func.func @rounding(%w: f32) {
  %c0 = arith.constant 0 : index
  %tile = memref.alloc() : memref<8xf8E4M3FNUZ, 3>
  %one = arith.constant 1.0 : f8E4M3FNUZ
  memref.store %one, %tile[%c0] : memref<8xf8E4M3FNUZ, 3>
  %t = arith.truncf %w toward_zero : f32 to f8E4M3FNUZ
  memref.store %t, %tile[%c0] : memref<8xf8E4M3FNUZ, 3>
  return
}

// -----

// Without fp8 nothing changes.

// CHECK-LABEL: func.func @none
// CHECK-NEXT:  %[[V:.*]] = memref.load %arg0[%arg1] : memref<?xi8>
// CHECK-NEXT:  return %[[V]] : i8
func.func @none(%x: memref<?xi8>, %i: index) -> i8 {
  %v = memref.load %x[%i] : memref<?xi8>
  return %v : i8
}
