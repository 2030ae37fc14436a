// PASS: spirv-f16-tiles-as-f32
// f16 work-group tiles hold f32, as the emitter's `__local float` arrays do
// (half_types.py): a store widens the value once; a load feeds an f32 user (an extf to
// f32) directly and others through a truncf. Global f16 buffers stay f16.

// CHECK-LABEL: func.func @tile
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<32xf32, 3>
// CHECK-NEXT:  %[[ROW:.*]] = vector.load %arg0[%arg1] : memref<?xf16>, vector<16xf16>
// CHECK-NEXT:  %[[WIDE:.*]] = arith.extf %[[ROW]] : vector<16xf16> to vector<16xf32>
// CHECK-NEXT:  vector.store %[[WIDE]], %[[TILE]][%arg1] : memref<32xf32, 3>, vector<16xf32>
// CHECK-NEXT:  %[[A:.*]] = memref.load %[[TILE]][%arg1] : memref<32xf32, 3>
// CHECK-NEXT:  %[[B:.*]] = memref.load %[[TILE]][%arg1] : memref<32xf32, 3>
// CHECK-NEXT:  %[[BH:.*]] = arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT:  %[[S:.*]] = arith.addf %[[BH]], %[[BH]] : f16
// CHECK-NEXT:  arith.truncf %[[A]] : f32 to f16
// CHECK:       memref.store %{{.*}}, %arg0[%arg1] : memref<?xf16>
func.func @tile(%x: memref<?xf16>, %i: index) {
  %tile = memref.alloc() : memref<32xf16, 3>
  %v = vector.load %x[%i] : memref<?xf16>, vector<16xf16>
  vector.store %v, %tile[%i] : memref<32xf16, 3>, vector<16xf16>
  %a = memref.load %tile[%i] : memref<32xf16, 3>
  %w = arith.extf %a : f16 to f32
  %b = memref.load %tile[%i] : memref<32xf16, 3>
  %s = arith.addf %b, %b : f16
  %t = arith.truncf %w : f32 to f16
  %u = arith.addf %s, %t : f16
  memref.store %u, %x[%i] : memref<?xf16>
  return
}

// -----

// A tile some other op reads (a vector transfer here) stays f16.

// CHECK-LABEL: func.func @other_use
// CHECK:       memref.alloc() : memref<32xf16, 3>
// CHECK-NOT:   f32
func.func @other_use(%x: memref<?xf16>, %i: index) {
  %tile = memref.alloc() : memref<32xf16, 3>
  %h = memref.load %x[%i] : memref<?xf16>
  memref.store %h, %tile[%i] : memref<32xf16, 3>
  %pad = arith.constant 0.0 : f16
  %v = vector.transfer_read %tile[%i], %pad {in_bounds = [true]} : memref<32xf16, 3>, vector<4xf16>
  vector.store %v, %x[%i] : memref<?xf16>, vector<4xf16>
  return
}
