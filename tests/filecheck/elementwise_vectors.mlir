// PASS: elementwise-vectors
// Elementwise loops of f32 on vectors (elementwise_vectors.py), CPU shape: one
// work-item steps through a float16 row per iteration. Cut from a masked
// `y = exp(x) * 2` of 256 elements (MLIR_ENABLE_DUMP, before elementwise-vectors; the
// tile path of its `if (full tiles)` version): the fill of the masked load's padding and
// the computation both step by 16, the scalar constants broadcast once before the loop.

// CHECK-LABEL: func.func @scaled
// CHECK:       scf.if
// CHECK-NEXT:    %[[ZEROS:.*]] = vector.broadcast %cst : f32 to vector<16xf32>
// CHECK-NEXT:    affine.for %[[I:.*]] = 0 to 256 step 16 {
// CHECK-NEXT:      affine.vector_store %[[ZEROS]], %alloc_1[%[[I]]] : memref<256xf32>, vector<16xf32>
// CHECK:       memref.copy
// CHECK-NEXT:  %[[TWOS:.*]] = vector.broadcast %cst_0 : f32 to vector<16xf32>
// CHECK-NEXT:  affine.for %[[J:.*]] = 0 to 256 step 16 {
// CHECK-NEXT:    %[[X:.*]] = affine.vector_load %alloc_1[%[[J]]] : memref<256xf32>, vector<16xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : vector<16xf32>
// CHECK-NEXT:    %[[Y:.*]] = arith.mulf %[[E]], %[[TWOS]] : vector<16xf32>
// CHECK-NEXT:    affine.vector_store %[[Y]], %alloc[%[[J]]] : memref<256xf32>, vector<16xf32>
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

// -----

// Inductor's looped reduction, one block of a row: `r0_index = r0_offset + r0_base;
// mask = (r0_index < r0_numel) & xmask; acc = tl.where(mask, acc + x * x, acc)`. The
// induction variable cast to i32 becomes the lanes' indices (its value broadcast, plus
// 0 ... 15), the i32 add and compare run on vectors, the row's flag is broadcast, and
// the select picks lane by lane on the mask.

// CHECK-LABEL: func.func @lane_indices
// CHECK:       %[[ROW_OK:.*]] = vector.broadcast %arg5 : i1 to vector<16xi1>
// CHECK:       affine.for %[[J:.*]] = 0 to 64 step 16 {
// CHECK:         %[[FIRST:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK-NEXT:    %[[LANES:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : vector<16xi32>
// CHECK-NEXT:    %[[SPLAT:.*]] = vector.broadcast %[[FIRST]] : i32 to vector<16xi32>
// CHECK-NEXT:    %[[INDEX:.*]] = arith.addi %[[SPLAT]], %[[LANES]] : vector<16xi32>
// CHECK:         %[[COLUMN:.*]] = arith.addi %{{.*}}, %[[INDEX]] : vector<16xi32>
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi slt, %[[COLUMN]], %{{.*}} : vector<16xi32>
// CHECK-NEXT:    %[[MASK:.*]] = arith.andi %[[IN]], %[[ROW_OK]] : vector<16xi1>
// CHECK-NEXT:    %[[NEW:.*]] = arith.select %[[MASK]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NEXT:    affine.vector_store %[[NEW]], %{{.*}}[0, %[[J]]] : memref<1x64xf32>, vector<16xf32>

func.func @lane_indices(%x: memref<1x64xf32>, %acc: memref<1x64xf32>, %out: memref<1x64xf32>, %offset: i32, %n: i32, %row_ok: i1) {
  affine.for %j = 0 to 64 {
    %old = affine.load %acc[0, %j] : memref<1x64xf32>
    %v = affine.load %x[0, %j] : memref<1x64xf32>
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %old, %sq : f32
    %base = arith.index_cast %j : index to i32
    %column = arith.addi %offset, %base : i32
    %in = arith.cmpi slt, %column, %n : i32
    %mask = arith.andi %in, %row_ok : i1
    %new = arith.select %mask, %s, %old : f32
    affine.store %new, %out[0, %j] : memref<1x64xf32>
  }
  return
}
