// PASS: emit-opencl
// Vector loads and stores at any element offset print as vloadN / vstoreN (f32) and
// vload_halfN / vstore_halfN_rte (f16, computed in float).

// CHECK-LABEL: __kernel void k(__global float* arg0, __global half* arg1, long arg2)
// CHECK:       float4 [[R:.*]] = vload4(0, arg0 + arg2);
// CHECK-NEXT:  float8 [[H:.*]] = vload_half8(0, arg1 + arg2);
// CHECK-NEXT:  vstore4([[R]], 0, arg0);
// CHECK-NEXT:  vstore_half8_rte([[H]], 0, arg1);
func.func @k(%x: memref<?xf32>, %y: memref<?xf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %r = vector.load %x[%i] : memref<?xf32>, vector<4xf32>
  %h = vector.load %y[%i] : memref<?xf16>, vector<8xf16>
  vector.store %r, %x[%c0] : memref<?xf32>, vector<4xf32>
  vector.store %h, %y[%c0] : memref<?xf16>, vector<8xf16>
  return
}

// -----

// A scalar bool broadcast into mask lanes is 0 / -1, as a comparison of vectors gives:
// `(x > 0) & ok` keeps every bit of the comparison's true lanes, and its zero extension
// to bytes is 1 where both hold.

// CHECK-LABEL: __kernel void flags(
// CHECK:       int4 [[OK:.*]] = (int4)(arg2 ? -1 : 0);
// CHECK:       int4 [[BOTH:.*]] = {{.*}} & [[OK]];
// CHECK:       char4 [[BYTES:.*]] = convert_char4(-[[BOTH]]);
func.func @flags(%x: memref<?xf32>, %out: memref<?xi8>, %ok: i1) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %v = vector.load %x[%c0] : memref<?xf32>, vector<4xf32>
  %positive = arith.cmpf ogt, %v, %zero : vector<4xf32>
  %oks = vector.broadcast %ok : i1 to vector<4xi1>
  %both = arith.andi %positive, %oks : vector<4xi1>
  %bytes = arith.extui %both : vector<4xi1> to vector<4xi8>
  vector.store %bytes, %out[%c0] : memref<?xi8>, vector<4xi8>
  return
}
