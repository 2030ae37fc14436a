// PASS: converting-copies
// fp16 / bf16 copies from global memory into a work-group tile, or from a tile into
// global memory (shared_copies.py), become an scf.parallel of element loads and stores (copy_loops.py) over the tile's
// static shape, which work_group_sharing.py then distributes over the work-items.

// A copy of n elements into a 256-element tile: the loop runs over the tile, each
// iteration copying its element where it lies within the copy's extent.

// CHECK-LABEL: func.func @masked
// CHECK:       %[[TILE:.*]] = memref.subview %alloc[0] [%arg1] [1]
// CHECK-NEXT:  %[[IN:.*]] = memref.subview %arg0[0] [%arg1] [1]
// CHECK-NOT:   memref.copy
// CHECK:       %[[N:.*]] = memref.dim %[[IN]], %{{.*}}
// CHECK:       scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c256) step (%c1) {
// CHECK-NEXT:    %[[INSIDE:.*]] = arith.cmpi slt, %[[I]], %[[N]] : index
// CHECK-NEXT:    scf.if %[[INSIDE]] {
// CHECK-NEXT:      %[[X:.*]] = memref.load %[[IN]][%[[I]]] : memref<?xf16, strided<[1]>>
// CHECK-NEXT:      memref.store %[[X]], %[[TILE]][%[[I]]] : memref<?xf16, strided<[1]>>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.reduce
// CHECK-NEXT:  }
func.func @masked(%src: memref<?xf16>, %n: index) {
  %tile = memref.alloc() : memref<256xf16>
  %view = memref.subview %tile[0] [%n] [1] : memref<256xf16> to memref<?xf16, strided<[1]>>
  %in = memref.subview %src[0] [%n] [1] : memref<?xf16> to memref<?xf16, strided<[1]>>
  memref.copy %in, %view : memref<?xf16, strided<[1]>> to memref<?xf16, strided<[1]>>
  return
}

// -----
// A whole 4x8 block: the copy's extent is the tile's shape, no bounds check.

// CHECK-LABEL: func.func @whole
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<4x8xbf16>
// CHECK-NEXT:  %[[IN:.*]] = memref.reinterpret_cast %arg0
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%c4, %c8) step (%c1, %c1) {
// CHECK-NEXT:    %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[J]]]
// CHECK-NEXT:    memref.store %[[X]], %[[TILE]][%[[I]], %[[J]]] : memref<4x8xbf16>
// CHECK-NEXT:    scf.reduce
// CHECK-NEXT:  }
func.func @whole(%src: memref<?xbf16>, %off: index) {
  %tile = memref.alloc() : memref<4x8xbf16>
  %in = memref.reinterpret_cast %src to offset: [%off], sizes: [4, 8], strides: [8, 1] : memref<?xbf16> to memref<4x8xbf16, strided<[8, 1], offset: ?>>
  memref.copy %in, %tile : memref<4x8xbf16, strided<[8, 1], offset: ?>> to memref<4x8xbf16>
  return
}

// -----
// f32 copies are the emitter's async work-group copies: left as they are.

// CHECK-LABEL: func.func @wide
// CHECK:       memref.copy
// CHECK-NOT:   scf.parallel
func.func @wide(%src: memref<?xf32>, %off: index) {
  %tile = memref.alloc() : memref<64xf32>
  %in = memref.reinterpret_cast %src to offset: [%off], sizes: [64], strides: [1] : memref<?xf32> to memref<64xf32, strided<[1], offset: ?>>
  memref.copy %in, %tile : memref<64xf32, strided<[1], offset: ?>> to memref<64xf32>
  return
}

// -----
// A masked store of a 64x64 fp16 tile (tutorial 03's `c`): the loop runs over the tile,
// each iteration storing its element where it lies within both extents.

// CHECK-LABEL: func.func @stored
// CHECK:       %[[TILE:.*]] = memref.subview %alloc[0, 0] [%arg1, %arg2] [1, 1]
// CHECK-NEXT:  %[[OUT:.*]] = memref.subview %arg0[0, 0] [%arg1, %arg2] [1, 1]
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%c64, %c64) step (%c1{{.*}}, %c1{{.*}}) {
// CHECK:         scf.if
// CHECK-NEXT:      %[[X:.*]] = memref.load %[[TILE]][%[[I]], %[[J]]]
// CHECK-NEXT:      memref.store %[[X]], %[[OUT]][%[[I]], %[[J]]]
func.func @stored(%dst: memref<?x64xf16>, %m: index, %n: index) {
  %tile = memref.alloc() : memref<64x64xf16>
  %view = memref.subview %tile[0, 0] [%m, %n] [1, 1] : memref<64x64xf16> to memref<?x?xf16, strided<[64, 1]>>
  %out = memref.subview %dst[0, 0] [%m, %n] [1, 1] : memref<?x64xf16> to memref<?x?xf16, strided<[64, 1]>>
  memref.copy %view, %out : memref<?x?xf16, strided<[64, 1]>> to memref<?x?xf16, strided<[64, 1]>>
  return
}

// -----
// A copy between a private array and a tile is no global copy: left as it is.

// CHECK-LABEL: func.func @private_to_tile
// CHECK:       memref.copy
// CHECK-NOT:   scf.parallel
func.func @private_to_tile() {
  %tile = memref.alloc() : memref<64xf16>
  %row = memref.alloca() : memref<64xf16>
  memref.copy %row, %tile : memref<64xf16> to memref<64xf16>
  return
}
