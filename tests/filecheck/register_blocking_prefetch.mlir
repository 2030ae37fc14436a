// PASS: register-blocking
// A k loop whose operand blocks move by loop-carried offsets prefetches the blocks its
// next iteration copies, when there is a next iteration, spread over the loop of row
// blocks of its contraction (next_block_prefetch.py): 14 rows make two blocks of six
// (and one of two), so each of the two iterations prefetches half the rows of each
// block, one prefetch per 64-byte line (16 f32). The next offsets are those the loop
// yields, recomputed before the row blocks from the iter_args and values from outside.

// CHECK-LABEL: func.func @matmul_k_loop
// CHECK-SAME:    (%[[A_ARG:.*]]: memref<?xf32>, %[[B_ARG:.*]]: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %[[STEPS:.*]]: i32, %[[A_STRIDE:.*]]: index, %[[B_STRIDE:.*]]: i32)
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %[[STEPS]] step %[[ONE]] iter_args(%[[A_OFFSET:.*]] = %{{.*}}, %[[B_OFFSET:.*]] = %{{.*}})
// CHECK:           memref.reinterpret_cast %[[A_ARG]] to offset: [%[[A_OFFSET]]]
// CHECK:           %[[B_ROW:.*]] = arith.index_cast %[[B_STRIDE]] : i32 to index
// CHECK:           memref.reinterpret_cast %[[B_ARG]] to offset: [%[[B_OFFSET]]]
// CHECK:           } else {
// CHECK-NEXT:        memref.copy
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[NEXT_K:.*]] = arith.addi %[[K]], %[[ONE]] : i32
// CHECK-NEXT:      %[[A_MORE:.*]] = arith.cmpi slt, %[[NEXT_K]], %[[STEPS]] : i32
// CHECK-NEXT:      %[[A_STEP:.*]] = arith.constant 32 : index
// CHECK-NEXT:      %[[A_NEXT:.*]] = arith.addi %[[A_OFFSET]], %[[A_STEP]] : index
// CHECK-NEXT:      %[[A_NEXT_BLOCK:.*]] = memref.reinterpret_cast %[[A_ARG]] to offset: [%[[A_NEXT]]], sizes: [14, 32], strides: [%[[A_STRIDE]], 1]
// CHECK-NEXT:      %[[NEXT_K:.*]] = arith.addi %[[K]], %[[ONE]] : i32
// CHECK-NEXT:      %[[B_MORE:.*]] = arith.cmpi slt, %[[NEXT_K]], %[[STEPS]] : i32
// CHECK-NEXT:      %[[DEPTH:.*]] = arith.constant 32 : i32
// CHECK-NEXT:      %[[B_STEP:.*]] = arith.muli %[[B_STRIDE]], %[[DEPTH]] : i32
// CHECK-NEXT:      %[[B_STEP_INDEX:.*]] = arith.index_cast %[[B_STEP]] : i32 to index
// CHECK-NEXT:      %[[B_NEXT:.*]] = arith.addi %[[B_OFFSET]], %[[B_STEP_INDEX]] : index
// CHECK-NEXT:      %[[B_NEXT_BLOCK:.*]] = memref.reinterpret_cast %[[B_ARG]] to offset: [%[[B_NEXT]]], sizes: [32, 16], strides: [%[[B_ROW]], 1]
// CHECK-NEXT:      affine.for %[[ROW:.*]] = 0 to 12 step 6 {
// CHECK-NEXT:        %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:        %[[BLOCK:.*]] = arith.divsi %[[ROW]], %[[SIX]] : index
// CHECK-NEXT:        %[[B_SHARE:.*]] = arith.constant 16 : index
// CHECK-NEXT:        %[[B_FROM:.*]] = arith.muli %[[BLOCK]], %[[B_SHARE]] : index
// CHECK-NEXT:        %[[B_SHARE:.*]] = arith.constant 16 : index
// CHECK-NEXT:        %[[B_UNTIL:.*]] = arith.addi %[[B_FROM]], %[[B_SHARE]] : index
// CHECK-NEXT:        %[[B_ROWS:.*]] = arith.constant 32 : index
// CHECK-NEXT:        %[[B_TO:.*]] = arith.minsi %[[B_UNTIL]], %[[B_ROWS]] : index
// CHECK-NEXT:        scf.if %[[B_MORE]] {
// CHECK-DAG:           %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:           %[[ROW_STEP:.*]] = arith.constant 1 : index
// CHECK-DAG:           %[[COLUMNS:.*]] = arith.constant 16 : index
// CHECK-DAG:           %[[LINE:.*]] = arith.constant 16 : index
// CHECK:               scf.for %[[R:.*]] = %[[B_FROM]] to %[[B_TO]] step %[[ROW_STEP]] {
// CHECK-NEXT:            scf.for %[[C:.*]] = %[[ZERO]] to %[[COLUMNS]] step %[[LINE]] {
// CHECK-NEXT:              memref.prefetch %[[B_NEXT_BLOCK]][%[[R]], %[[C]]], read, locality<3>, data
// CHECK-NEXT:            }
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK:             %[[A_FROM:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:             %[[A_TO:.*]] = arith.minsi
// CHECK-NEXT:        scf.if %[[A_MORE]] {
// CHECK:               %[[COLUMNS:.*]] = arith.constant 32 : index
// CHECK-NEXT:          %[[LINE:.*]] = arith.constant 16 : index
// CHECK-NEXT:          scf.for %[[R:.*]] = %[[A_FROM]] to %[[A_TO]] step %{{.*}} {
// CHECK-NEXT:            scf.for %[[C:.*]] = %{{.*}} to %[[COLUMNS]] step %[[LINE]] {
// CHECK-NEXT:              memref.prefetch %[[A_NEXT_BLOCK]][%[[R]], %[[C]]], read, locality<3>, data
// CHECK:           math.fma
// CHECK:           affine.for %{{.*}} = 12 to 14 step 2 {
// CHECK-NOT:         memref.prefetch
// CHECK:           scf.yield

func.func @matmul_k_loop(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %rows: index, %cols: index, %k_steps: i32, %a_stride: index, %b_stride: i32) {
  %acc = memref.alloc() : memref<14x16xf32>
  %lhs = memref.alloc() : memref<14x32xf32>
  %rhs = memref.alloc() : memref<32x16xf32>
  %c0 = arith.constant 0 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %ends:2 = scf.for %k = %c0_i32 to %k_steps step %c1_i32 iter_args(%a_offset = %c0, %b_offset = %c0) -> (index, index) : i32 {
    %a_block = memref.reinterpret_cast %a_arg to offset: [%a_offset], sizes: [14, 32], strides: [%a_stride, 1] : memref<?xf32> to memref<14x32xf32, strided<[?, 1], offset: ?>>
    %a_part = memref.subview %a_block[0, 0] [%rows, 32] [1, 1] : memref<14x32xf32, strided<[?, 1], offset: ?>> to memref<?x32xf32, strided<[?, 1], offset: ?>>
    %lhs_part = memref.subview %lhs[0, 0] [%rows, 32] [1, 1] : memref<14x32xf32> to memref<?x32xf32, strided<[32, 1]>>
    memref.copy %a_part, %lhs_part : memref<?x32xf32, strided<[?, 1], offset: ?>> to memref<?x32xf32, strided<[32, 1]>>
    %b_stride_index = arith.index_cast %b_stride : i32 to index
    %b_block = memref.reinterpret_cast %b_arg to offset: [%b_offset], sizes: [32, 16], strides: [%b_stride_index, 1] : memref<?xf32> to memref<32x16xf32, strided<[?, 1], offset: ?>>
    %b_part = memref.subview %b_block[0, 0] [32, %cols] [1, 1] : memref<32x16xf32, strided<[?, 1], offset: ?>> to memref<32x?xf32, strided<[?, 1], offset: ?>>
    %rhs_part = memref.subview %rhs[0, 0] [32, %cols] [1, 1] : memref<32x16xf32> to memref<32x?xf32, strided<[16, 1]>>
    memref.copy %b_part, %rhs_part : memref<32x?xf32, strided<[?, 1], offset: ?>> to memref<32x?xf32, strided<[16, 1]>>
    affine.for %j = 0 to 14 {
      affine.for %kk = 0 to 32 {
        affine.for %l = 0 to 16 {
          %a = affine.load %lhs[%j, %kk] : memref<14x32xf32>
          %b = affine.load %rhs[%kk, %l] : memref<32x16xf32>
          %c = affine.load %acc[%j, %l] : memref<14x16xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %acc[%j, %l] : memref<14x16xf32>
        }
      }
    }
    %c32 = arith.constant 32 : index
    %a_next = arith.addi %a_offset, %c32 : index
    %c32_i32 = arith.constant 32 : i32
    %b_step = arith.muli %b_stride, %c32_i32 : i32
    %b_step_index = arith.index_cast %b_step : i32 to index
    %b_next = arith.addi %b_offset, %b_step_index : index
    scf.yield %a_next, %b_next : index, index
  }
  return
}

// -----

// A block whose offset the loop does not carry (here: the same block every iteration)
// gets no prefetch, and neither does a block whose next offset comes from memory.

// CHECK-LABEL: func.func @offsets_not_carried
// CHECK-NOT:     memref.prefetch
// CHECK:         math.fma
func.func @offsets_not_carried(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %offsets: memref<1xindex>, %rows: index, %k_steps: i32, %stride: index) {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x4xf32>
  %rhs = memref.alloc() : memref<4x16xf32>
  %c0 = arith.constant 0 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %end = scf.for %k = %c0_i32 to %k_steps step %c1_i32 iter_args(%b_offset = %c0) -> (index) : i32 {
    %a_block = memref.reinterpret_cast %a_arg to offset: [%c0], sizes: [8, 4], strides: [%stride, 1] : memref<?xf32> to memref<8x4xf32, strided<[?, 1], offset: ?>>
    %a_part = memref.subview %a_block[0, 0] [%rows, 4] [1, 1] : memref<8x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32, strided<[?, 1], offset: ?>>
    %lhs_part = memref.subview %lhs[0, 0] [%rows, 4] [1, 1] : memref<8x4xf32> to memref<?x4xf32, strided<[4, 1]>>
    memref.copy %a_part, %lhs_part : memref<?x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32, strided<[4, 1]>>
    %b_block = memref.reinterpret_cast %b_arg to offset: [%b_offset], sizes: [4, 16], strides: [%stride, 1] : memref<?xf32> to memref<4x16xf32, strided<[?, 1], offset: ?>>
    %b_part = memref.subview %b_block[0, 0] [%rows, 16] [1, 1] : memref<4x16xf32, strided<[?, 1], offset: ?>> to memref<?x16xf32, strided<[?, 1], offset: ?>>
    %rhs_part = memref.subview %rhs[0, 0] [%rows, 16] [1, 1] : memref<4x16xf32> to memref<?x16xf32, strided<[16, 1]>>
    memref.copy %b_part, %rhs_part : memref<?x16xf32, strided<[?, 1], offset: ?>> to memref<?x16xf32, strided<[16, 1]>>
    affine.for %j = 0 to 8 {
      affine.for %kk = 0 to 4 {
        affine.for %l = 0 to 16 {
          %a = affine.load %lhs[%j, %kk] : memref<8x4xf32>
          %b = affine.load %rhs[%kk, %l] : memref<4x16xf32>
          %c = affine.load %acc[%j, %l] : memref<8x16xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %acc[%j, %l] : memref<8x16xf32>
        }
      }
    }
    %b_next = memref.load %offsets[%c0] : memref<1xindex>
    scf.yield %b_next : index
  }
  return
}

// -----

// A block whose rows are not contiguous (a transposed operand: unit stride down its
// columns) is not prefetched line by line along its rows; the contiguous one is.

// CHECK-LABEL: func.func @transposed_block
// CHECK:         memref.prefetch %{{.*}} : memref<4x16xf32, strided<[?, 1], offset: ?>>
// CHECK-NOT:     memref.prefetch
// CHECK:         math.fma
func.func @transposed_block(%a_arg: memref<?xf32>, %b_arg: memref<?xf32>, %rows: index, %k_steps: i32, %stride: index) {
  %acc = memref.alloc() : memref<8x16xf32>
  %lhs = memref.alloc() : memref<8x4xf32>
  %rhs = memref.alloc() : memref<4x16xf32>
  %c0 = arith.constant 0 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i32 = arith.constant 1 : i32
  %ends:2 = scf.for %k = %c0_i32 to %k_steps step %c1_i32 iter_args(%a_offset = %c0, %b_offset = %c0) -> (index, index) : i32 {
    %a_block = memref.reinterpret_cast %a_arg to offset: [%a_offset], sizes: [8, 4], strides: [1, %stride] : memref<?xf32> to memref<8x4xf32, strided<[1, ?], offset: ?>>
    %a_part = memref.subview %a_block[0, 0] [%rows, 4] [1, 1] : memref<8x4xf32, strided<[1, ?], offset: ?>> to memref<?x4xf32, strided<[1, ?], offset: ?>>
    %lhs_part = memref.subview %lhs[0, 0] [%rows, 4] [1, 1] : memref<8x4xf32> to memref<?x4xf32, strided<[4, 1]>>
    memref.copy %a_part, %lhs_part : memref<?x4xf32, strided<[1, ?], offset: ?>> to memref<?x4xf32, strided<[4, 1]>>
    %b_block = memref.reinterpret_cast %b_arg to offset: [%b_offset], sizes: [4, 16], strides: [%stride, 1] : memref<?xf32> to memref<4x16xf32, strided<[?, 1], offset: ?>>
    %b_part = memref.subview %b_block[0, 0] [%rows, 16] [1, 1] : memref<4x16xf32, strided<[?, 1], offset: ?>> to memref<?x16xf32, strided<[?, 1], offset: ?>>
    %rhs_part = memref.subview %rhs[0, 0] [%rows, 16] [1, 1] : memref<4x16xf32> to memref<?x16xf32, strided<[16, 1]>>
    memref.copy %b_part, %rhs_part : memref<?x16xf32, strided<[?, 1], offset: ?>> to memref<?x16xf32, strided<[16, 1]>>
    affine.for %j = 0 to 8 {
      affine.for %kk = 0 to 4 {
        affine.for %l = 0 to 16 {
          %a = affine.load %lhs[%j, %kk] : memref<8x4xf32>
          %b = affine.load %rhs[%kk, %l] : memref<4x16xf32>
          %c = affine.load %acc[%j, %l] : memref<8x16xf32>
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          affine.store %s, %acc[%j, %l] : memref<8x16xf32>
        }
      }
    }
    %c4 = arith.constant 4 : index
    %a_next = arith.addi %a_offset, %c4 : index
    %b_step = arith.muli %stride, %c4 : index
    %b_next = arith.addi %b_offset, %b_step : index
    scf.yield %a_next, %b_next : index, index
  }
  return
}
