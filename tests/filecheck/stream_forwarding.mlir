// PASS: stream-forwarding
// Vector add on 1024-element blocks: the nest reads x and y and writes out through
// their views directly when the block is full and out does not overlap an input
// (or is placed exactly on it); otherwise the tiles, fills and copies run as before.
// This checks the guard: each input's byte range against out's, and the block's size.

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index
// CHECK:   %[[XV:.*]] = memref.reinterpret_cast %[[X]]
// CHECK:   %[[PARTIAL:.*]] = arith.cmpi ne, %[[N]], %c1024
// CHECK:   %[[YV:.*]] = memref.reinterpret_cast %[[Y]]
// CHECK:   %[[OV:.*]] = memref.reinterpret_cast %[[OUT]]
// CHECK:   memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK:   memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:   arith.andi
// CHECK-NEXT:   %[[OUT_X:.*]] = arith.ori
// CHECK:   memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK:   memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK:   arith.andi
// CHECK-NEXT:   %[[OUT_Y:.*]] = arith.ori
// CHECK:   %[[FULL:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : index
// CHECK:   %[[APART:.*]] = arith.andi %[[OUT_X]], %[[OUT_Y]] : i1
// CHECK:   %[[DIRECT:.*]] = arith.andi %[[APART]], %[[FULL]] : i1
// CHECK:   scf.if %[[DIRECT]] {
// CHECK-NEXT:     affine.for %[[I:.*]] = 0 to 1024 {
// CHECK-NEXT:       affine.load %[[XV]][%[[I]]]
// CHECK-NEXT:       affine.load %[[YV]][%[[I]]]
// CHECK-NEXT:       arith.addf
// CHECK-NEXT:       affine.store %{{.*}}, %[[OV]][%[[I]]]
// CHECK-NEXT:     }
// CHECK-NEXT:   } else {
// CHECK-NEXT:     scf.if %[[PARTIAL]] {
// CHECK:          memref.copy
// CHECK-NEXT:     memref.copy
// CHECK-NEXT:     affine.for
// CHECK:          memref.copy
// CHECK-NEXT:   }
// CHECK-NEXT:   return
func.func @add(%x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>, %n: index,
               %off: index) attributes {opencl.arg_names = ["x", "y", "out", "n", "off"]} {
  %zero = arith.constant 0.0 : f32
  %c1024 = arith.constant 1024 : index
  %xv = memref.reinterpret_cast %x to offset: [%off], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %xt = memref.alloc() : memref<1024xf32>
  %partial = arith.cmpi ne, %n, %c1024 : index
  scf.if %partial {
    affine.for %i = 0 to 1024 {
      affine.store %zero, %xt[%i] : memref<1024xf32>
    }
  }
  %xs = memref.subview %xv[0] [%n] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  %xts = memref.subview %xt[0] [%n] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
  memref.copy %xs, %xts : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  %yv = memref.reinterpret_cast %y to offset: [%off], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %yt = memref.alloc() : memref<1024xf32>
  %ys = memref.subview %yv[0] [%n] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  %yts = memref.subview %yt[0] [%n] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
  memref.copy %ys, %yts : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1]>>
  %ot = memref.alloc() : memref<1024xf32>
  affine.for %i = 0 to 1024 {
    %a = affine.load %xt[%i] : memref<1024xf32>
    %b = affine.load %yt[%i] : memref<1024xf32>
    %s = arith.addf %a, %b : f32
    affine.store %s, %ot[%i] : memref<1024xf32>
  }
  %ov = memref.reinterpret_cast %out to offset: [%off], sizes: [1024], strides: [1] : memref<?xf32> to memref<1024xf32, strided<[1], offset: ?>>
  %os = memref.subview %ot[0] [%n] [1] : memref<1024xf32> to memref<?xf32, strided<[1]>>
  %ovs = memref.subview %ov[0] [%n] [1] : memref<1024xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %os, %ovs : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
  return
}
