// PASS: register-blocking
// The condition that versions a copy into an operand tile on filling the whole tile
// (full_tile_copies.py) tests every dimension of the mask, since the whole copy moves
// every row and column of the block. Here K (the rows of the right operand, the columns
// of the left one) is masked as well as M and N: each operand's condition compares both
// of its extents with the tile's, K's included.

// CHECK-LABEL: func.func @masked_k
// CHECK-SAME:    (%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[ROWS:.*]]: index, %[[DEPTH:.*]]: index, %[[COLS:.*]]: index, %{{.*}}: index)
// CHECK:         %[[LHS:.*]] = memref.alloc() : memref<8x32xf32>
// CHECK:         %[[RHS:.*]] = memref.alloc() : memref<32x16xf32>
// CHECK:         %[[A_BLOCK:.*]] = memref.reinterpret_cast
// CHECK:         %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[ALL_ROWS:.*]] = arith.cmpi eq, %[[ROWS]], %[[C8]] : index
// CHECK-NEXT:    %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[A_ALL_DEPTH:.*]] = arith.cmpi eq, %[[DEPTH]], %[[C32]] : index
// CHECK-NEXT:    %[[A_FULL:.*]] = arith.andi %[[ALL_ROWS]], %[[A_ALL_DEPTH]] : i1
// CHECK-NEXT:    scf.if %[[A_FULL]] {
// CHECK-NEXT:      memref.copy %[[A_BLOCK]], %[[LHS]] : memref<8x32xf32, strided<[?, 1]>> to memref<8x32xf32>
// CHECK:         %[[B_BLOCK:.*]] = memref.reinterpret_cast
// CHECK:         %[[C32_B:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[B_ALL_DEPTH:.*]] = arith.cmpi eq, %[[DEPTH]], %[[C32_B]] : index
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[ALL_COLS:.*]] = arith.cmpi eq, %[[COLS]], %[[C16]] : index
// CHECK-NEXT:    %[[B_FULL:.*]] = arith.andi %[[B_ALL_DEPTH]], %[[ALL_COLS]] : i1
// CHECK-NEXT:    scf.if %[[B_FULL]] {
// CHECK-NEXT:      memref.copy %[[B_BLOCK]], %[[RHS]] : memref<32x16xf32, strided<[?, 1]>> to memref<32x16xf32>
// CHECK:         math.fma
func.func @masked_k(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %rows: index, %depth: index, %cols: index, %stride: index) {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x32xf32>
  %rhs = memref.alloc() : memref<32x16xf32>
  %a_block = memref.reinterpret_cast %a_arg to offset: [0], sizes: [8, 32], strides: [%stride, 1] : memref<?xf32> to memref<8x32xf32, strided<[?, 1]>>
  %a_part = memref.subview %a_block[0, 0] [%rows, %depth] [1, 1] : memref<8x32xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[?, 1]>>
  %lhs_part = memref.subview %lhs[0, 0] [%rows, %depth] [1, 1] : memref<8x32xf32> to memref<?x?xf32, strided<[32, 1]>>
  memref.copy %a_part, %lhs_part : memref<?x?xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[32, 1]>>
  %b_block = memref.reinterpret_cast %b_arg to offset: [0], sizes: [32, 16], strides: [%stride, 1] : memref<?xf32> to memref<32x16xf32, strided<[?, 1]>>
  %b_part = memref.subview %b_block[0, 0] [%depth, %cols] [1, 1] : memref<32x16xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[?, 1]>>
  %rhs_part = memref.subview %rhs[0, 0] [%depth, %cols] [1, 1] : memref<32x16xf32> to memref<?x?xf32, strided<[16, 1]>>
  memref.copy %b_part, %rhs_part : memref<?x?xf32, strided<[?, 1]>> to memref<?x?xf32, strided<[16, 1]>>
  affine.for %j = 0 to 8 {
    affine.for %k = 0 to 32 {
      affine.for %l = 0 to 16 {
        %a = affine.load %lhs[%j, %k] : memref<8x32xf32>
        %b = affine.load %rhs[%k, %l] : memref<32x16xf32>
        %c = affine.load %acc[%j, %l] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<8x16xf32>
      }
    }
  }
  return
}

// -----

// A constant extent smaller than the tile's (`k < 16` with a constant bound in a 32-wide
// K block) means the block is never whole: the copies stay as they are, unversioned,
// rather than versioned on their run-time extents alone (a whole copy would read 16 rows
// or columns past the mask, and past the end of the buffer).

// CHECK-LABEL: func.func @constant_partial_k
// CHECK-NOT:     scf.if
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<?x16xf32, strided<[?, 1]>> to memref<?x16xf32, strided<[32, 1]>>
// CHECK-NOT:     scf.if
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<16x?xf32, strided<[?, 1]>> to memref<16x?xf32, strided<[16, 1]>>
// CHECK-NOT:     scf.if
// CHECK:         math.fma
func.func @constant_partial_k(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %rows: index, %cols: index, %stride: index) {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x32xf32>
  %rhs = memref.alloc() : memref<32x16xf32>
  %a_block = memref.reinterpret_cast %a_arg to offset: [0], sizes: [8, 32], strides: [%stride, 1] : memref<?xf32> to memref<8x32xf32, strided<[?, 1]>>
  %a_part = memref.subview %a_block[0, 0] [%rows, 16] [1, 1] : memref<8x32xf32, strided<[?, 1]>> to memref<?x16xf32, strided<[?, 1]>>
  %lhs_part = memref.subview %lhs[0, 0] [%rows, 16] [1, 1] : memref<8x32xf32> to memref<?x16xf32, strided<[32, 1]>>
  memref.copy %a_part, %lhs_part : memref<?x16xf32, strided<[?, 1]>> to memref<?x16xf32, strided<[32, 1]>>
  %b_block = memref.reinterpret_cast %b_arg to offset: [0], sizes: [32, 16], strides: [%stride, 1] : memref<?xf32> to memref<32x16xf32, strided<[?, 1]>>
  %b_part = memref.subview %b_block[0, 0] [16, %cols] [1, 1] : memref<32x16xf32, strided<[?, 1]>> to memref<16x?xf32, strided<[?, 1]>>
  %rhs_part = memref.subview %rhs[0, 0] [16, %cols] [1, 1] : memref<32x16xf32> to memref<16x?xf32, strided<[16, 1]>>
  memref.copy %b_part, %rhs_part : memref<16x?xf32, strided<[?, 1]>> to memref<16x?xf32, strided<[16, 1]>>
  affine.for %j = 0 to 8 {
    affine.for %k = 0 to 32 {
      affine.for %l = 0 to 16 {
        %a = affine.load %lhs[%j, %k] : memref<8x32xf32>
        %b = affine.load %rhs[%k, %l] : memref<32x16xf32>
        %c = affine.load %acc[%j, %l] : memref<8x16xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %c, %p : f32
        affine.store %s, %acc[%j, %l] : memref<8x16xf32>
      }
    }
  }
  return
}
