// PASS: in-place-updates
// A loop-carried 4x32 sum, `acc += tl.load(...)` as bufferization leaves it: the loop
// writes a fresh tile from the old sum and a loaded tile, and the fresh tile is copied
// back at the iteration's end. The loop reads the sum only at the elements it writes:
// it writes the sum itself; the copy and the fresh tile go.

// CHECK-LABEL: func.func @sum
// CHECK:       %[[ACC:.*]] = memref.alloc() : memref<4x32xf32>
// CHECK:       %[[LOADED:.*]] = memref.alloc() : memref<4x32xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for
// CHECK:         memref.copy %{{.*}}, %[[LOADED]]
// CHECK-NEXT:    scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK-NEXT:      %[[OLD:.*]] = vector.load %[[ACC]][%[[I]], %[[J]]]
// CHECK-NEXT:      %[[NEW:.*]] = vector.load %[[LOADED]][%[[I]], %[[J]]]
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[OLD]], %[[NEW]]
// CHECK-NEXT:      vector.store %[[SUM]], %[[ACC]][%[[I]], %[[J]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.reinterpret_cast
// CHECK-NEXT:  memref.copy %[[ACC]]
// CHECK-NEXT:  return
func.func @sum(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %acc = memref.alloc() : memref<4x32xf32>
  %loaded = memref.alloc() : memref<4x32xf32>
  %next = memref.alloc() : memref<4x32xf32>
  scf.for %it = %c0 to %n step %c4 {
    %block = memref.reinterpret_cast %in to offset: [%it], sizes: [4, 32], strides: [32, 1] : memref<?xf32> to memref<4x32xf32, strided<[32, 1], offset: ?>>
    memref.copy %block, %loaded : memref<4x32xf32, strided<[32, 1], offset: ?>> to memref<4x32xf32>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c16) {
      %a = vector.load %acc[%i, %j] : memref<4x32xf32>, vector<16xf32>
      %b = vector.load %loaded[%i, %j] : memref<4x32xf32>, vector<16xf32>
      %s = arith.addf %a, %b : vector<16xf32>
      vector.store %s, %next[%i, %j] : memref<4x32xf32>, vector<16xf32>
      scf.reduce
    }
    memref.copy %next, %acc : memref<4x32xf32> to memref<4x32xf32>
  }
  %result = memref.reinterpret_cast %out to offset: [0], sizes: [4, 32], strides: [32, 1] : memref<?xf32> to memref<4x32xf32, strided<[32, 1]>>
  memref.copy %acc, %result : memref<4x32xf32> to memref<4x32xf32, strided<[32, 1]>>
  return
}

// -----
// The loop reads the old sum one row further down than it writes (a stencil): in place,
// a later iteration would read a row already overwritten. Nothing changes.

// CHECK-LABEL: func.func @shifted
// CHECK-COUNT-2: memref.alloc()
// CHECK:         vector.store %{{.*}}, %[[NEXT:.*]][%{{.*}}, %{{.*}}]
// CHECK:         memref.copy %[[NEXT]], %{{.*}} : memref<4x32xf32> to memref<4x32xf32>
func.func @shifted(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %acc = memref.alloc() : memref<4x32xf32>
  %next = memref.alloc() : memref<4x32xf32>
  scf.for %it = %c0 to %n step %c1 {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c16) {
      %below = arith.addi %i, %c1 : index
      %row = arith.minsi %below, %c3 : index
      %a = vector.load %acc[%row, %j] : memref<4x32xf32>, vector<16xf32>
      vector.store %a, %next[%i, %j] : memref<4x32xf32>, vector<16xf32>
      scf.reduce
    }
    memref.copy %next, %acc : memref<4x32xf32> to memref<4x32xf32>
  }
  return
}

// -----
// The old sum is read between the loop and the copy (`prev = acc; acc = acc + x`, then
// both used): it is still needed after the loop has computed the new one. Nothing
// changes.

// CHECK-LABEL: func.func @old_value_used
// CHECK-COUNT-2: memref.alloc()
// CHECK:         vector.store %{{.*}}, %[[NEXT:.*]][%{{.*}}, %{{.*}}]
// CHECK:         memref.load
// CHECK:         memref.copy %[[NEXT]], %{{.*}} : memref<4x32xf32> to memref<4x32xf32>
func.func @old_value_used(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant dense<1.0> : vector<16xf32>
  %acc = memref.alloc() : memref<4x32xf32>
  %next = memref.alloc() : memref<4x32xf32>
  scf.for %it = %c0 to %n step %c1 {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c16) {
      %a = vector.load %acc[%i, %j] : memref<4x32xf32>, vector<16xf32>
      %s = arith.addf %a, %one : vector<16xf32>
      vector.store %s, %next[%i, %j] : memref<4x32xf32>, vector<16xf32>
      scf.reduce
    }
    %first = memref.load %acc[%c0, %c0] : memref<4x32xf32>
    memref.store %first, %out[%it] : memref<?xf32>
    memref.copy %next, %acc : memref<4x32xf32> to memref<4x32xf32>
  }
  return
}

// -----

// Inductor's looped reduction (`_tmp3 = tl.where(r0_mask & xmask, _tmp3 + x * x, _tmp3)`
// over an [XBLOCK=1, R0_BLOCK=64] tile): the tile's unit row is indexed by a constant 0
// and the loop runs over the columns alone. Each iteration still reads the old sum only
// at the element it writes: it writes the sum itself.

// CHECK-LABEL: func.func @unit_row
// CHECK:       %[[ACC:.*]] = memref.alloc() : memref<1x64xf32>
// CHECK-NOT:   memref.alloc() : memref<1x64xf32>
// CHECK:       scf.for
// CHECK:         scf.parallel (%[[J:.*]]) =
// CHECK:           %[[OLD:.*]] = memref.load %[[ACC]][%c0, %[[J]]]
// CHECK:           memref.store %{{.*}}, %[[ACC]][%c0, %[[J]]]
// CHECK-NEXT:      scf.reduce
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.copy %[[ACC]], %arg2

func.func @unit_row(%x: memref<1x64xf32>, %n: index, %out: memref<1x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x64xf32>
  scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %acc[%c0, %j] : memref<1x64xf32>
    scf.reduce
  }
  %next = memref.alloc() : memref<1x64xf32>
  scf.for %k = %c0 to %n step %c64 {
    scf.parallel (%j) = (%c0) to (%c64) step (%c1) {
      %old = memref.load %acc[%c0, %j] : memref<1x64xf32>
      %v = memref.load %x[%c0, %j] : memref<1x64xf32>
      %sq = arith.mulf %v, %v : f32
      %s = arith.addf %old, %sq : f32
      %col = arith.addi %k, %j : index
      %in = arith.cmpi slt, %col, %n : index
      %new = arith.select %in, %s, %old : f32
      memref.store %new, %next[%c0, %j] : memref<1x64xf32>
      scf.reduce
    }
    memref.copy %next, %acc : memref<1x64xf32> to memref<1x64xf32>
  }
  memref.copy %acc, %out : memref<1x64xf32> to memref<1x64xf32>
  return
}
