// PASS: register-blocking
// The copies that fill a blocked contraction's operand tiles from masked blocks get two
// versions: when every run-time extent is the tile's, one copy of the whole block with
// constant extents; else the copy as it was (full_tile_copies.py). The copy out of the
// accumulator is not an operand's and is left as it is.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[ROWS:.*]]: index, %[[DEPTH:.*]]: index, %[[COLS:.*]]: index, %{{.*}}: index)
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK:         %[[LHS:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK:         %[[RHS:.*]] = memref.alloc() : memref<4x16xf32>
// CHECK:         %[[A_BLOCK:.*]] = memref.reinterpret_cast
// CHECK-NEXT:    %[[A_PART:.*]] = memref.subview %[[A_BLOCK]][0, 0] [%[[ROWS]], %[[DEPTH]]] [1, 1]
// CHECK-NEXT:    %[[LHS_PART:.*]] = memref.subview %[[LHS]][0, 0] [%[[ROWS]], %[[DEPTH]]] [1, 1]
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[ALL_ROWS:.*]] = arith.cmpi eq, %[[ROWS]], %[[C8]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ALL_DEPTH:.*]] = arith.cmpi eq, %[[DEPTH]], %[[C4]] : index
// CHECK-NEXT:    %[[FULL:.*]] = arith.andi %[[ALL_ROWS]], %[[ALL_DEPTH]] : i1
// CHECK-NEXT:    scf.if %[[FULL]] {
// CHECK-NEXT:      memref.copy %[[A_BLOCK]], %[[LHS]] : memref<8x4xf32, strided<[?, 1]>> to memref<8x4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memref.copy %[[A_PART]], %[[LHS_PART]] : memref<?x?xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[4, 1]>>
// CHECK-NEXT:    }
// CHECK:         %[[B_BLOCK:.*]] = memref.reinterpret_cast
// CHECK-NEXT:    %[[B_PART:.*]] = memref.subview %[[B_BLOCK]][0, 0] [4, %[[COLS]]] [1, 1]
// CHECK-NEXT:    %[[RHS_PART:.*]] = memref.subview %[[RHS]][0, 0] [4, %[[COLS]]] [1, 1]
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[ALL_COLS:.*]] = arith.cmpi eq, %[[COLS]], %[[C16]] : index
// CHECK-NEXT:    scf.if %[[ALL_COLS]] {
// CHECK-NEXT:      memref.copy %[[B_BLOCK]], %[[RHS]] : memref<4x16xf32, strided<[?, 1]>> to memref<4x16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memref.copy %[[B_PART]], %[[RHS_PART]]
// CHECK-NEXT:    }
// CHECK:         math.fma
// CHECK:         %[[C_PART:.*]] = memref.subview
// CHECK-NEXT:    %[[ACC_PART:.*]] = memref.subview %[[ACC]][0, 0] [%[[ROWS]], %[[COLS]]] [1, 1]
// CHECK-NEXT:    memref.copy %[[ACC_PART]], %[[C_PART]]
// CHECK-NEXT:    return
func.func @matmul(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %c_arg: memref<?xf32>, %rows: index, %depth: index, %cols: index, %stride: index) {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x4xf32>
  %rhs = memref.alloc() : memref<4x16xf32>
  %a_block = memref.reinterpret_cast %a_arg to offset: [0], sizes: [8, 4], strides: [%stride, 1] : memref<?xf32> to memref<8x4xf32, strided<[?, 1]>>
  %a_part = memref.subview %a_block[0, 0] [%rows, %depth] [1, 1] : memref<8x4xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[?, 1]>>
  %lhs_part = memref.subview %lhs[0, 0] [%rows, %depth] [1, 1] : memref<8x4xf32> to memref<?x?xf32, strided<[4, 1]>>
  memref.copy %a_part, %lhs_part : memref<?x?xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[4, 1]>>
  %b_block = memref.reinterpret_cast %b_arg to offset: [0], sizes: [4, 16], strides: [%stride, 1] : memref<?xf32> to memref<4x16xf32, strided<[?, 1]>>
  %b_part = memref.subview %b_block[0, 0] [4, %cols] [1, 1] : memref<4x16xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[?, 1]>>
  %rhs_part = memref.subview %rhs[0, 0] [4, %cols] [1, 1] : memref<4x16xf32> to memref<4x?xf32, strided<[16, 1]>>
  memref.copy %b_part, %rhs_part : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[16, 1]>>
  affine.for %j = 0 to 8 {
    affine.for %k = 0 to 4 {
      affine.for %l = 0 to 16 {
        %a = affine.load %lhs[%j, %k] : memref<8x4xf32>
        %b = affine.load %rhs[%k, %l] : memref<4x16xf32>
        %c = affine.load %acc[%j, %l] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<8x16xf32>
      }
    }
  }
  %c_block = memref.reinterpret_cast %c_arg to offset: [0], sizes: [8, 16], strides: [%stride, 1] : memref<?xf32> to memref<8x16xf32, strided<[?, 1]>>
  %c_part = memref.subview %c_block[0, 0] [%rows, %cols] [1, 1] : memref<8x16xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[?, 1]>>
  %acc_part = memref.subview %acc[0, 0] [%rows, %cols] [1, 1] : memref<8x16xf32> to memref<?x?xf32, strided<[16, 1]>>
  memref.copy %acc_part, %c_part : memref<?x?xf32, strided<[16, 1]>> to memref<?x?xf32, strided<[?, 1]>>
  return
}

// -----

// Copies that do not fill the tile from its origin with a block of its shape stay as
// they are: a sub-block at an offset, and a block larger than the tile.

// CHECK-LABEL: func.func @partial_copies
// CHECK-NOT:     scf.if
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<?x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32, strided<[4, 1], offset: 4>>
// CHECK-NOT:     scf.if
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[16, 1]>>
// CHECK-NOT:     scf.if
// CHECK:         math.fma
func.func @partial_copies(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %rows: index, %cols: index, %stride: index) {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x4xf32>
  %rhs = memref.alloc() : memref<4x16xf32>
  %a_block = memref.reinterpret_cast %a_arg to offset: [0], sizes: [8, 4], strides: [%stride, 1] : memref<?xf32> to memref<8x4xf32, strided<[?, 1]>>
  %a_part = memref.subview %a_block[1, 0] [%rows, 4] [1, 1] : memref<8x4xf32, strided<[?, 1]>> to memref<?x4xf32, strided<[?, 1], offset: ?>>
  %lhs_part = memref.subview %lhs[1, 0] [%rows, 4] [1, 1] : memref<8x4xf32> to memref<?x4xf32, strided<[4, 1], offset: 4>>
  memref.copy %a_part, %lhs_part : memref<?x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32, strided<[4, 1], offset: 4>>
  %b_block = memref.reinterpret_cast %b_arg to offset: [0], sizes: [4, 32], strides: [%stride, 1] : memref<?xf32> to memref<4x32xf32, strided<[?, 1]>>
  %b_part = memref.subview %b_block[0, 0] [4, %cols] [1, 1] : memref<4x32xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[?, 1]>>
  %rhs_part = memref.subview %rhs[0, 0] [4, %cols] [1, 1] : memref<4x16xf32> to memref<4x?xf32, strided<[16, 1]>>
  memref.copy %b_part, %rhs_part : memref<4x?xf32, strided<[?, 1]>> to memref<4x?xf32, strided<[16, 1]>>
  affine.for %j = 0 to 8 {
    affine.for %k = 0 to 4 {
      affine.for %l = 0 to 16 {
        %a = affine.load %lhs[%j, %k] : memref<8x4xf32>
        %b = affine.load %rhs[%k, %l] : memref<4x16xf32>
        %c = affine.load %acc[%j, %l] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<8x16xf32>
      }
    }
  }
  return
}
