// PASS: barrier-negations
// CONFIG: work_items=64 quirks=fneg_across_barrier
// Quirk fneg_across_barrier (triton_spirv/target.py; barrier_negations.py): in a
// function that holds a barrier, every exact float negation (negf, a product by -1.0,
// a difference from -0.0) becomes fma(x, -1, -0), scalars and vectors alike; other
// products and differences, and functions without barriers, keep theirs.

// CHECK-LABEL: func.func @with_barrier
// CHECK-SAME:  (%[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<4xf32>
// CHECK-NOT:   arith.negf
// CHECK:       arith.constant 2.000000e+00 : f32
// CHECK-NEXT:  %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:  %[[MZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK-NEXT:  math.fma %[[X]], %[[M1]], %[[MZ]] : f32
// CHECK:       math.fma %[[X]], %{{.*}}, %{{.*}} : f32
// CHECK:       math.fma %[[X]], %{{.*}}, %{{.*}} : f32
// CHECK:       math.fma %[[V]], %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:       arith.mulf %[[X]], %{{.*}} : f32
// CHECK:       arith.subf %[[X]], %{{.*}} : f32
// CHECK:       gpu.barrier
func.func @with_barrier(%x: f32, %v: vector<4xf32>, %tile: memref<4xf32>) {
  %i = arith.constant 0 : index
  %m1 = arith.constant -1.0 : f32
  %mz = arith.constant -0.0 : f32
  %two = arith.constant 2.0 : f32
  %a = arith.negf %x : f32
  %b = arith.mulf %x, %m1 : f32
  %c = arith.subf %mz, %x : f32
  %nv = arith.negf %v : vector<4xf32>
  %d = arith.mulf %x, %two : f32
  %e = arith.subf %x, %mz : f32
  memref.store %a, %tile[%i] : memref<4xf32>
  memref.store %b, %tile[%i] : memref<4xf32>
  memref.store %c, %tile[%i] : memref<4xf32>
  memref.store %d, %tile[%i] : memref<4xf32>
  memref.store %e, %tile[%i] : memref<4xf32>
  vector.store %nv, %tile[%i] : memref<4xf32>, vector<4xf32>
  gpu.barrier
  return
}

// CHECK-LABEL: func.func @without_barrier
// CHECK:       arith.negf
// CHECK-NOT:   math.fma
func.func @without_barrier(%x: f32, %tile: memref<4xf32>) {
  %i = arith.constant 0 : index
  %a = arith.negf %x : f32
  memref.store %a, %tile[%i] : memref<4xf32>
  return
}
