// PASS: fill-forwarding
// A tile copied from a constant-filled tile is filled directly (fill_forwarding.py):
// `acc = tl.zeros(...)` inside a loop (tutorial 09's accumulator of every output tile)
// bufferizes to one zero tile filled once and a copy of it into the accumulator in
// every iteration. The copy becomes a clone of the fill loop writing the accumulator,
// and the zero tile goes.

// CHECK-LABEL: func.func @zeroed_in_loop
// CHECK:       %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-NOT:   memref.alloc() : memref<8x16xf32>
// CHECK:       %[[ACC:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for
// CHECK-NEXT:    scf.parallel (%[[I:.*]], %[[J:.*]]) = {{.*}} step (%c1, %c16) {
// CHECK-NEXT:      vector.store %[[ZEROS]], %[[ACC]][%[[I]], %[[J]]] : memref<8x16xf32>, vector<16xf32>
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.load %[[ACC]]
// CHECK-NOT:   memref.copy
func.func @zeroed_in_loop(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %zero = memref.alloc() : memref<8x16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c16) {
    vector.store %zeros, %zero[%i, %j] : memref<8x16xf32>, vector<16xf32>
    scf.reduce
  }
  %acc = memref.alloc() : memref<8x16xf32>
  scf.for %t = %c0 to %n step %c1 {
    memref.copy %zero, %acc : memref<8x16xf32> to memref<8x16xf32>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) {
      %x = memref.load %acc[%i, %j] : memref<8x16xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %out[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A filled tile written again after its fill is not constant: the copy stays.

// CHECK-LABEL: func.func @written_again
// CHECK:       memref.alloc() : memref<8x16xf32>
// CHECK:       memref.alloc() : memref<8x16xf32>
// CHECK:       scf.for
// CHECK-NEXT:    memref.copy
func.func @written_again(%out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  %one = arith.constant 1.0 : f32
  %zero = memref.alloc() : memref<8x16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c16) {
    vector.store %zeros, %zero[%i, %j] : memref<8x16xf32>, vector<16xf32>
    scf.reduce
  }
  memref.store %one, %zero[%c0, %c0] : memref<8x16xf32>
  %acc = memref.alloc() : memref<8x16xf32>
  scf.for %t = %c0 to %n step %c1 {
    memref.copy %zero, %acc : memref<8x16xf32> to memref<8x16xf32>
    scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c16) step (%c1, %c1) {
      %x = memref.load %acc[%i, %j] : memref<8x16xf32>
      memref.store %x, %out[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}
