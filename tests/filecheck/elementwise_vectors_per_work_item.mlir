// PASS: elementwise-vectors
// CONFIG: work_items=128
// Elementwise loops on vectors (elementwise_vectors.py), GPU shape: the work-items
// share the loop (work_group_sharing.py), so each iteration moves one float4, a
// work-item's share of a round. Same input as elementwise_vectors.mlir.

// CHECK-LABEL: func.func @scaled
// CHECK:       affine.for %{{.*}} = 0 to 256 step 4 {
// CHECK-NEXT:    affine.vector_store %{{.*}} : memref<256xf32>, vector<4xf32>
// CHECK:       affine.for %[[J:.*]] = 0 to 256 step 4 {
// CHECK-NEXT:    %[[X:.*]] = affine.vector_load %alloc_1[%[[J]]] : memref<256xf32>, vector<4xf32>
// CHECK-NEXT:    math.exp %[[X]] : vector<4xf32>
module {
  func.func @scaled(%arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: i32) attributes {opencl.arg_names = ["x_ptr", "y_ptr", "n"]} {
    %cst = arith.constant 0.000000e+00 : f32
    %c256 = arith.constant 256 : index
    %c0 = arith.constant 0 : index
    %cst_0 = arith.constant 2.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
    %alloc_1 = memref.alloc() : memref<256xf32>
    %3 = arith.index_cast %arg2 : i32 to index
    %5 = arith.maxsi %3, %c0 : index
    %6 = arith.minsi %5, %c256 : index
    %7 = arith.cmpi ne, %6, %c256 : index
    %reinterpret_cast = memref.reinterpret_cast %arg0 to offset: [0], sizes: [256], strides: [1] : memref<?xf32> to memref<256xf32, strided<[1]>>
    %subview = memref.subview %reinterpret_cast[0] [%6] [1] : memref<256xf32, strided<[1]>> to memref<?xf32, strided<[1]>>
    %subview_2 = memref.subview %alloc_1[0] [%6] [1] : memref<256xf32> to memref<?xf32, strided<[1]>>
    %reinterpret_cast_3 = memref.reinterpret_cast %arg1 to offset: [0], sizes: [256], strides: [1] : memref<?xf32> to memref<256xf32, strided<[1]>>
    %subview_4 = memref.subview %alloc[0] [%6] [1] : memref<256xf32> to memref<?xf32, strided<[1]>>
    %subview_5 = memref.subview %reinterpret_cast_3[0] [%6] [1] : memref<256xf32, strided<[1]>> to memref<?xf32, strided<[1]>>
    scf.if %7 {
      affine.for %arg3 = 0 to 256 {
        affine.store %cst, %alloc_1[%arg3] : memref<256xf32>
      }
    }
    memref.copy %subview, %subview_2 : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1]>>
    affine.for %arg3 = 0 to 256 {
      %37 = affine.load %alloc_1[%arg3] : memref<256xf32>
      %38 = math.exp %37 : f32
      %39 = arith.mulf %38, %cst_0 : f32
      affine.store %39, %alloc[%arg3] : memref<256xf32>
    }
    memref.copy %subview_4, %subview_5 : memref<?xf32, strided<[1]>> to memref<?xf32, strided<[1]>>
    return
  }
}

// -----

// A loop that reads another element than it writes is not elementwise: it stays.

// CHECK-LABEL: func.func @reversed
// CHECK-NOT:   vector
// CHECK:       affine.for %{{.*}} = 0 to 256 {
// CHECK:         affine.load %{{.*}}[-%{{.*}} + 255]
module {
  func.func @reversed(%x: memref<256xf32>, %y: memref<256xf32>) {
    %cst_0 = arith.constant 2.000000e+00 : f32
    affine.for %arg3 = 0 to 256 {
      %37 = affine.load %x[-%arg3 + 255] : memref<256xf32>
      %39 = arith.mulf %37, %cst_0 : f32
      affine.store %39, %y[%arg3] : memref<256xf32>
    }
    return
  }
}
