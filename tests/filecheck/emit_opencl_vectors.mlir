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
