// PASS: owner-copies
// A masked load of a 4x32 block (`tl.load(ptr + offs, mask=mask, other=0.)` as the
// frontend lowers it: a fill of `other` for a partial block, a copy of the valid
// rows x columns) whose tile only an elementwise loop over the whole tile reads, at
// its own elements. The copy becomes a loop in the reader's steps: a vector load
// where the row's 16 elements all lie inside the copied extents, else the elements
// inside them one by one. The fill stays.

// CHECK-LABEL: func.func @masked
// CHECK-SAME:  (%[[IN:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %[[ROWS:[^:]*]]: index, %[[COLS:[^:]*]]: index
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<4x32xf32>
// CHECK:       %[[BLOCK:.*]] = memref.reinterpret_cast %[[IN]]
// CHECK:       scf.if %{{.*}} {
// CHECK:         vector.store %{{.*}}, %[[TILE]]
// CHECK:       }
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%c4{{.*}}, %c32{{.*}}) step (%c1{{.*}}, %c16{{.*}}) {
// CHECK-NEXT:    %[[ROW_IN:.*]] = arith.cmpi slt, %[[I]], %[[ROWS]] : index
// CHECK-NEXT:    %[[END:.*]] = arith.addi %[[J]], %c16{{.*}} : index
// CHECK-NEXT:    %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[COLS]] : index
// CHECK-NEXT:    %[[WHOLE:.*]] = arith.andi %[[ROW_IN]], %[[FITS]] : i1
// CHECK-NEXT:    scf.if %[[WHOLE]] {
// CHECK-NEXT:      %[[V:.*]] = vector.load %[[BLOCK]][%[[I]], %[[J]]] : {{.*}}, vector<16xf32>
// CHECK-NEXT:      vector.store %[[V]], %[[TILE]][%[[I]], %[[J]]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.for %[[K:.*]] = %{{.*}} to %c16{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[COL:.*]] = arith.addi %[[J]], %[[K]] : index
// CHECK-NEXT:        %[[COL_IN:.*]] = arith.cmpi slt, %[[COL]], %[[COLS]] : index
// CHECK-NEXT:        %[[OK:.*]] = arith.andi %[[ROW_IN]], %[[COL_IN]] : i1
// CHECK-NEXT:        scf.if %[[OK]] {
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[BLOCK]][%[[I]], %[[COL]]]
// CHECK-NEXT:          memref.store %[[X]], %[[TILE]][%[[I]], %[[COL]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.reduce
// CHECK-NEXT:  }
// CHECK:       scf.parallel
// CHECK-NEXT:    vector.load %[[TILE]]
func.func @masked(%in: memref<?xf32>, %out: memref<?xf32>, %rows: index, %cols: index, %off: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %tile = memref.alloc() : memref<4x32xf32>
  %block = memref.reinterpret_cast %in to offset: [%off], sizes: [4, 32], strides: [%cols, 1] : memref<?xf32> to memref<4x32xf32, strided<[?, 1], offset: ?>>
  %r = arith.cmpi ne, %rows, %c4 : index
  %c = arith.cmpi ne, %cols, %c32 : index
  %partial = arith.ori %r, %c : i1
  scf.if %partial {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c16) {
      vector.store %zeros, %tile[%i, %j] : memref<4x32xf32>, vector<16xf32>
      scf.reduce
    }
  }
  %from = memref.subview %block[0, 0] [%rows, %cols] [1, 1] : memref<4x32xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %to = memref.subview %tile[0, 0] [%rows, %cols] [1, 1] : memref<4x32xf32> to memref<?x?xf32, strided<[32, 1]>>
  memref.copy %from, %to : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[32, 1]>>
  %result = memref.reinterpret_cast %out to offset: [%off], sizes: [4, 32], strides: [32, 1] : memref<?xf32> to memref<4x32xf32, strided<[32, 1], offset: ?>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c16) {
    %x = vector.load %tile[%i, %j] : memref<4x32xf32>, vector<16xf32>
    %y = arith.addf %x, %x : vector<16xf32>
    vector.store %y, %result[%i, %j] : memref<4x32xf32, strided<[32, 1], offset: ?>>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----
// An unmasked load of a whole f16 block read one element at a time: one loop over the
// reader's elements, without bounds checks.

// CHECK-LABEL: func.func @whole_f16
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c64{{.*}}) step (%c1{{.*}}) {
// CHECK-NEXT:    %[[X:.*]] = memref.load %{{.*}}[%[[I]]] : memref<64xf16, strided<[1], offset: ?>>
// CHECK-NEXT:    memref.store %[[X]], %{{.*}}[%[[I]]] : memref<64xf16>
// CHECK-NEXT:    scf.reduce
func.func @whole_f16(%in: memref<?xf16>, %out: memref<?xf32>, %off: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %tile = memref.alloc() : memref<64xf16>
  %block = memref.reinterpret_cast %in to offset: [%off], sizes: [64], strides: [1] : memref<?xf16> to memref<64xf16, strided<[1], offset: ?>>
  memref.copy %block, %tile : memref<64xf16, strided<[1], offset: ?>> to memref<64xf16>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %tile[%i] : memref<64xf16>
    %y = arith.extf %x : f16 to f32
    memref.store %y, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----
// An unmasked load of a whole bf16 block read 16 elements at a time: no vector loads
// of bf16, so element by element inside each iteration's 16.

// CHECK-LABEL: func.func @whole_bf16
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c64{{.*}}) step (%c16{{.*}}) {
// CHECK-NEXT:    scf.for %[[K:.*]] = %{{.*}} to %c16{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[AT:.*]] = arith.addi %[[I]], %[[K]] : index
// CHECK-NEXT:      %[[X:.*]] = memref.load %{{.*}}[%[[AT]]] : memref<64xbf16, strided<[1], offset: ?>>
// CHECK-NEXT:      memref.store %[[X]], %{{.*}}[%[[AT]]] : memref<64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.reduce
func.func @whole_bf16(%in: memref<?xbf16>, %out: memref<?xbf16>, %off: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %tile = memref.alloc() : memref<64xbf16>
  %block = memref.reinterpret_cast %in to offset: [%off], sizes: [64], strides: [1] : memref<?xbf16> to memref<64xbf16, strided<[1], offset: ?>>
  memref.copy %block, %tile : memref<64xbf16, strided<[1], offset: ?>> to memref<64xbf16>
  %result = memref.reinterpret_cast %out to offset: [%off], sizes: [64], strides: [1] : memref<?xbf16> to memref<64xbf16, strided<[1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%c64) step (%c16) {
    %x = vector.load %tile[%i] : memref<64xbf16>, vector<16xbf16>
    vector.store %x, %result[%i] : memref<64xbf16, strided<[1], offset: ?>>, vector<16xbf16>
    scf.reduce
  }
  return
}

// -----
// The tile is read transposed (a work-item reads elements another one loaded): the
// copy stays, and the tile with it.

// CHECK-LABEL: func.func @transposed
// CHECK:       memref.copy
// CHECK:       scf.parallel
// CHECK-NEXT:    memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x8xf32>
func.func @transposed(%in: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tile = memref.alloc() : memref<8x8xf32>
  %block = memref.reinterpret_cast %in to offset: [0], sizes: [8, 8], strides: [8, 1] : memref<?xf32> to memref<8x8xf32, strided<[8, 1]>>
  memref.copy %block, %tile : memref<8x8xf32, strided<[8, 1]>> to memref<8x8xf32>
  %result = memref.reinterpret_cast %out to offset: [0], sizes: [8, 8], strides: [8, 1] : memref<?xf32> to memref<8x8xf32, strided<[8, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %x = memref.load %tile[%j, %i] : memref<8x8xf32>
    memref.store %x, %result[%i, %j] : memref<8x8xf32, strided<[8, 1]>>
    scf.reduce
  }
  return
}

// -----
// A masked store (`tl.store(ptr + offs, x, mask=...)`) of a tile an elementwise loop
// wrote at its own elements: each iteration stores its 16 elements, as a vector when
// they lie inside the extent.

// CHECK-LABEL: func.func @masked_store
// CHECK-SAME:  (%{{[^:]*}}: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>, %[[N:[^:]*]]: index
// CHECK:       %[[TILE:.*]] = memref.alloc() : memref<64xf32>
// CHECK:       %[[BLOCK:.*]] = memref.reinterpret_cast %[[OUT]]
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c64{{.*}}) step (%c16{{.*}}) {
// CHECK-NEXT:    %[[END:.*]] = arith.addi %[[I]], %c16{{.*}} : index
// CHECK-NEXT:    %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[N]] : index
// CHECK-NEXT:    scf.if %[[FITS]] {
// CHECK-NEXT:      %[[V:.*]] = vector.load %[[TILE]][%[[I]]] : memref<64xf32>, vector<16xf32>
// CHECK-NEXT:      vector.store %[[V]], %[[BLOCK]][%[[I]]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.for %[[K:.*]] = %{{.*}} to %c16{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %[[I]], %[[K]] : index
// CHECK-NEXT:        %[[IN:.*]] = arith.cmpi slt, %[[AT]], %[[N]] : index
// CHECK-NEXT:        scf.if %[[IN]] {
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[TILE]][%[[AT]]]
// CHECK-NEXT:          memref.store %[[X]], %[[BLOCK]][%[[AT]]]
// CHECK:       return
func.func @masked_store(%in: memref<?xf32>, %out: memref<?xf32>, %n: index, %off: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant dense<2.0> : vector<16xf32>
  %tile = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c16) {
    vector.store %two, %tile[%i] : memref<64xf32>, vector<16xf32>
    scf.reduce
  }
  %block = memref.reinterpret_cast %out to offset: [%off], sizes: [64], strides: [1] : memref<?xf32> to memref<64xf32, strided<[1], offset: ?>>
  %from = memref.subview %tile[0] [%n] [1] : memref<64xf32> to memref<?xf32, strided<[1]>>
  %to = memref.subview %block[0] [%n] [1] : memref<64xf32, strided<[1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
  memref.copy %from, %to : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1], offset: ?>>
  return
}

// -----
// `tl.sum(acc, axis=0)` starts from a copy of the accumulator's first row (a view of
// another tile) into the sum's tile, which a loop over column vectors then updates
// row by row: the copy runs on the same column vectors.

// CHECK-LABEL: func.func @column_sums
// CHECK:       %[[ACC:.*]] = memref.alloc() : memref<8x64xf32>
// CHECK:       %[[ROW:.*]] = memref.subview %[[ACC]][0, 0] [1, 64] [1, 1]
// CHECK:       %[[SUM:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NOT:   memref.copy
// CHECK:       scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%c64{{.*}}) step (%c16{{.*}}) {
// CHECK-NEXT:    %[[V:.*]] = vector.load %[[ROW]][%[[J]]] : memref<64xf32, strided<[1]>>, vector<16xf32>
// CHECK-NEXT:    vector.store %[[V]], %[[SUM]][%[[J]]] : memref<64xf32>, vector<16xf32>
// CHECK-NEXT:    scf.reduce
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.subview %[[ACC]][1, 0] [7, 64] [1, 1]
func.func @column_sums(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %ones = arith.constant dense<1.0> : vector<16xf32>
  %acc = memref.alloc() : memref<8x64xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c64) step (%c1, %c16) {
    vector.store %ones, %acc[%i, %j] : memref<8x64xf32>, vector<16xf32>
    scf.reduce
  }
  %row = memref.subview %acc[0, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<64xf32, strided<[1]>>
  %sum = memref.alloc() : memref<64xf32>
  memref.copy %row, %sum : memref<64xf32, strided<[1]>> to memref<64xf32>
  %rest = memref.subview %acc[1, 0] [7, 64] [1, 1] : memref<8x64xf32> to memref<7x64xf32, strided<[64, 1], offset: 64>>
  scf.for %r = %c0 to %c7 step %c1 {
    scf.parallel (%j) = (%c0) to (%c64) step (%c16) {
      %x = vector.load %rest[%r, %j] : memref<7x64xf32, strided<[64, 1], offset: 64>>, vector<16xf32>
      %s = vector.load %sum[%j] : memref<64xf32>, vector<16xf32>
      %t = arith.addf %s, %x : vector<16xf32>
      vector.store %t, %sum[%j] : memref<64xf32>, vector<16xf32>
      scf.reduce
    }
  }
  %result = memref.reinterpret_cast %out to offset: [0], sizes: [64], strides: [1] : memref<?xf32> to memref<64xf32, strided<[1]>>
  scf.parallel (%j) = (%c0) to (%c64) step (%c16) {
    %s = vector.load %sum[%j] : memref<64xf32>, vector<16xf32>
    vector.store %s, %result[%j] : memref<64xf32, strided<[1]>>, vector<16xf32>
    scf.reduce
  }
  return
}
