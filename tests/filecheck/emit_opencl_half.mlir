// PASS: emit-opencl
// f16 values are computed in float: global f16 buffers are read with vload_half and
// written with vstore_half_rte (which rounds to f16, to nearest even); a conversion to
// f16 of a float value rounds through the half helpers.

// CHECK:       // f16 / bf16 values are computed in float
// CHECK:       static inline float round_to_half_float(float x) {
// CHECK-LABEL: __kernel void k(__global half* arg0, long arg1, float arg2)
// CHECK:       float [[H:.*]] = vload_half(arg1, arg0);
// CHECK-NEXT:  float [[S:v[0-9]+]] = [[H]] + [[H]];
// CHECK-NEXT:  vstore_half_rte([[S]], 0, arg0);
// CHECK-NEXT:  float [[R:[a-z0-9_]+]] = round_to_half_float(arg2);
// CHECK-NEXT:  vstore_half_rte([[R]], 1, arg0);
func.func @k(%y: memref<?xf16>, %i: index, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = memref.load %y[%i] : memref<?xf16>
  %s = arith.addf %h, %h : f16
  memref.store %s, %y[%c0] : memref<?xf16>
  %r = arith.truncf %f : f32 to f16
  memref.store %r, %y[%c1] : memref<?xf16>
  return
}

// -----

// Without f16 values: no helpers, no note.

// CHECK-NOT:   half
func.func @none(%x: memref<?xf32>, %i: index) {
  %v = memref.load %x[%i] : memref<?xf32>
  memref.store %v, %x[%i] : memref<?xf32>
  return
}
