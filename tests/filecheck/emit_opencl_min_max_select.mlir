// PASS: emit-opencl
// Min, max and select print for their types (emitter_opencl/scalars.py, helpers.py):
// maximumf (NaN-propagating, -0 < +0) as a helper per type, minnumf as fmin, a signed
// integer max as max(), an unsigned min on the operands' unsigned type; a scalar select
// as `?:`, a vector select as select() on the lanes' integer mask.

// CHECK:       static inline float maximum_float(float a, float b) {
// CHECK-LABEL: __kernel void k(
// CHECK:       float4 [[V:.*]] = vload4(0, arg0);
// CHECK-NEXT:  float4 [[W:.*]] = vload4(0, arg0 + 4);
// CHECK-NEXT:  float [[M:v[0-9]+]] = maximum_float(arg1, arg2);
// CHECK-NEXT:  float [[N:v[0-9]+]] = fmin([[M]], arg2);
// CHECK-NEXT:  bool [[C:v[0-9]+]] = [[N]] < arg1;
// CHECK-NEXT:  float [[S:v[0-9]+]] = [[C]] ? [[N]] : arg1;
// CHECK-NEXT:  int4 [[LANES:v[0-9]+]] = [[V]] < [[W]];
// CHECK-NEXT:  float4 {{v[0-9]+}} = select([[W]], [[V]], [[LANES]]);
// CHECK:       max(arg3, arg4)
// CHECK-SAME:  min((uint)arg3, (uint)arg4)
func.func @k(%x: memref<?xf32>, %a: f32, %b: f32, %i: i32, %j: i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %v = vector.load %x[%c0] : memref<?xf32>, vector<4xf32>
  %w = vector.load %x[%c4] : memref<?xf32>, vector<4xf32>
  %m = arith.maximumf %a, %b : f32
  %n = arith.minnumf %m, %b : f32
  %k = arith.maxsi %i, %j : i32
  %u = arith.minui %i, %j : i32
  %c = arith.cmpf olt, %n, %a : f32
  %s = arith.select %c, %n, %a : f32
  %lanes = arith.cmpf olt, %v, %w : vector<4xf32>
  %t = arith.select %lanes, %v, %w : vector<4xi1>, vector<4xf32>
  memref.store %s, %x[%c0] : memref<?xf32>
  %ki = arith.addi %k, %u : i32
  %kf = arith.sitofp %ki : i32 to f32
  memref.store %kf, %x[%c0] : memref<?xf32>
  vector.store %t, %x[%c0] : memref<?xf32>, vector<4xf32>
  return
}
