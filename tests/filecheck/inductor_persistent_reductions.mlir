// PASS: ttir-to-memref
// Inductor's persistent reductions (torch.compile with cpu_backend="triton"; the TTIR
// Triton prints for the kernels of tests/data/inductor/kernels.py, locations dropped),
// lowered to the memref stage for the CPU shape: 2-D [8, 1024] tiles whose row sums
// and maxima run in 16 vector lanes (register-blocked), and whose elementwise tails
// run on vector<16xf32> along the contiguous axis, with each row's statistic (the
// `[:, None]` broadcast: loaded at [row, 0], invariant in the column loop) computed
// once per vector as a scalar and broadcast (memref_stage/elementwise_vectors.py).

// gelu(layer_norm(x)) * 2: mean and variance in lanes, then the tail with rsqrt of
// the row's variance as a scalar and erf on vectors.
// CHECK-LABEL: func.func @triton_per_fused_gelu_mul_native_layer_norm_0
// CHECK:       scf.for {{.*}} iter_args
// CHECK:         vector.load {{.*}} : memref<8x63x16xf32, {{.*}}>, vector<16xf32>
// CHECK-NEXT:    arith.addf {{.*}} : vector<16xf32>
// The 16 lanes of each row, then (not vectorized: 15 steps) the row's sum.
// CHECK:       scf.for {{.*}} = %c0 to %c15 step %c1 {
// CHECK:       scf.for %[[ROW:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:    scf.for %[[COL:.*]] = %c0 to %c1024 step %c16 {
// CHECK-NEXT:      vector.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<8x1024xf32>, vector<16xf32>
// CHECK-NEXT:      %[[SUM:.*]] = memref.load %{{.*}}[%[[ROW]], %c0] : memref<8x1xf32>
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[SUM]], %{{.*}} : f32
// CHECK-NEXT:      %[[MEANS:.*]] = vector.broadcast %[[MEAN]] : f32 to vector<16xf32>
// CHECK-NEXT:      arith.subf %{{.*}}, %[[MEANS]] : vector<16xf32>
// CHECK:         scf.for %[[COL:.*]] = %c0 to %c1024 step %c16 {
// CHECK:           %[[VAR:.*]] = memref.load %{{.*}}[%{{.*}}, %c0] : memref<8x1xf32>
// CHECK:           %[[RSQRT:.*]] = math.rsqrt %{{.*}} : f32
// CHECK-NEXT:      %[[SPLAT:.*]] = vector.broadcast %[[RSQRT]] : f32 to vector<16xf32>
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[SPLAT]] : vector<16xf32>
// CHECK:           math.erf %{{.*}} : vector<16xf32>
// CHECK:           vector.store %{{.*}} : memref<8x1024xf32>, vector<16xf32>
// CHECK-NOT:   math.erf {{.*}} : f32
module {
  tt.func public @triton_per_fused_gelu_mul_native_layer_norm_0(%in_out_ptr1: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %in_ptr0: !tt.ptr<f32>, %in_ptr1: !tt.ptr<f32>, %in_ptr2: !tt.ptr<f32>, %xnumel: i32 {tt.divisibility = 16 : i32}, %r0_numel: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %tmp29 = arith.constant dense<2.000000e+00> : tensor<8x1024xf32>
    %tmp26 = arith.constant dense<1.000000e+00> : tensor<8x1024xf32>
    %tmp23 = arith.constant dense<0.707106769> : tensor<8x1024xf32>
    %tmp21 = arith.constant dense<5.000000e-01> : tensor<8x1024xf32>
    %tmp13 = arith.constant dense<9.99999974E-6> : tensor<8x1xf32>
    %cst = arith.constant dense<1.024000e+03> : tensor<8x1xf32>
    %cst_0 = arith.constant dense<1024> : tensor<8x1xi32>
    %xoffset = arith.constant 8 : i32
    %xoffset_1 = tt.get_program_id x : i32
    %xoffset_2 = arith.muli %xoffset_1, %xoffset : i32
    %xindex = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xindex_3 = tt.expand_dims %xindex {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
    %xindex_4 = tt.splat %xoffset_2 : i32 -> tensor<8x1xi32>
    %xindex_5 = arith.addi %xindex_4, %xindex_3 : tensor<8x1xi32>
    %r0_index = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %r0_index_6 = tt.expand_dims %r0_index {axis = 0 : i32} : tensor<1024xi32> -> tensor<1x1024xi32>
    %tmp0 = arith.muli %xindex_5, %cst_0 : tensor<8x1xi32>
    %tmp0_7 = tt.broadcast %r0_index_6 : tensor<1x1024xi32> -> tensor<8x1024xi32>
    %tmp0_8 = tt.broadcast %tmp0 : tensor<8x1xi32> -> tensor<8x1024xi32>
    %tmp0_9 = arith.addi %tmp0_7, %tmp0_8 : tensor<8x1024xi32>
    %tmp0_10 = tt.splat %in_ptr0 : !tt.ptr<f32> -> tensor<8x1024x!tt.ptr<f32>>
    %tmp0_11 = tt.addptr %tmp0_10, %tmp0_9 : tensor<8x1024x!tt.ptr<f32>>, tensor<8x1024xi32>
    %tmp0_12 = tt.load %tmp0_11 {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>} : tensor<8x1024x!tt.ptr<f32>>
    %tmp16 = tt.splat %in_ptr1 : !tt.ptr<f32> -> tensor<1x1024x!tt.ptr<f32>>
    %tmp16_13 = tt.addptr %tmp16, %r0_index_6 : tensor<1x1024x!tt.ptr<f32>>, tensor<1x1024xi32>
    %tmp16_14 = tt.load %tmp16_13 {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>} : tensor<1x1024x!tt.ptr<f32>>
    %tmp18 = tt.splat %in_ptr2 : !tt.ptr<f32> -> tensor<1x1024x!tt.ptr<f32>>
    %tmp18_15 = tt.addptr %tmp18, %r0_index_6 : tensor<1x1024x!tt.ptr<f32>>, tensor<1x1024xi32>
    %tmp18_16 = tt.load %tmp18_15 {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_last>} : tensor<1x1024x!tt.ptr<f32>>
    %tmp3 = "tt.reduce"(%tmp0_12) <{axis = 1 : i32}> ({
    ^bb0(%tmp3_28: f32, %tmp3_29: f32):
      %tmp3_30 = arith.addf %tmp3_28, %tmp3_29 : f32
      tt.reduce.return %tmp3_30 : f32
    }) : (tensor<8x1024xf32>) -> tensor<8xf32>
    %tmp3_17 = tt.expand_dims %tmp3 {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %tmp5 = arith.divf %tmp3_17, %cst : tensor<8x1xf32>
    %tmp6 = tt.broadcast %tmp5 : tensor<8x1xf32> -> tensor<8x1024xf32>
    %tmp6_18 = arith.subf %tmp0_12, %tmp6 : tensor<8x1024xf32>
    %tmp7 = arith.mulf %tmp6_18, %tmp6_18 : tensor<8x1024xf32>
    %tmp10 = "tt.reduce"(%tmp7) <{axis = 1 : i32}> ({
    ^bb0(%tmp10_28: f32, %tmp10_29: f32):
      %tmp10_30 = arith.addf %tmp10_28, %tmp10_29 : f32
      tt.reduce.return %tmp10_30 : f32
    }) : (tensor<8x1024xf32>) -> tensor<8xf32>
    %tmp10_19 = tt.expand_dims %tmp10 {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %tmp11 = arith.divf %tmp10_19, %cst : tensor<8x1xf32>
    %tmp13_20 = arith.addf %tmp11, %tmp13 : tensor<8x1xf32>
    %tmp14 = tt.extern_elementwise %tmp13_20 {libname = "", libpath = "", pure = true, symbol = "__nv_rsqrtf"} : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %tmp15 = tt.broadcast %tmp14 : tensor<8x1xf32> -> tensor<8x1024xf32>
    %tmp15_21 = arith.mulf %tmp6_18, %tmp15 : tensor<8x1024xf32>
    %tmp17 = tt.broadcast %tmp16_14 : tensor<1x1024xf32> -> tensor<8x1024xf32>
    %tmp17_22 = arith.mulf %tmp15_21, %tmp17 : tensor<8x1024xf32>
    %tmp19 = tt.broadcast %tmp18_16 : tensor<1x1024xf32> -> tensor<8x1024xf32>
    %tmp19_23 = arith.addf %tmp17_22, %tmp19 : tensor<8x1024xf32>
    %tmp21_24 = arith.mulf %tmp19_23, %tmp21 : tensor<8x1024xf32>
    %tmp23_25 = arith.mulf %tmp19_23, %tmp23 : tensor<8x1024xf32>
    %tmp24 = tt.extern_elementwise %tmp23_25 {libname = "", libpath = "", pure = true, symbol = "__nv_erff"} : (tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %tmp26_26 = arith.addf %tmp24, %tmp26 : tensor<8x1024xf32>
    %tmp27 = arith.mulf %tmp21_24, %tmp26_26 : tensor<8x1024xf32>
    %tmp29_27 = arith.mulf %tmp27, %tmp29 : tensor<8x1024xf32>
    %0 = tt.splat %in_out_ptr1 : !tt.ptr<f32> -> tensor<8x1024x!tt.ptr<f32>>
    %1 = tt.addptr %0, %tmp0_9 : tensor<8x1024x!tt.ptr<f32>>, tensor<8x1024xi32>
    tt.store %1, %tmp29_27 : tensor<8x1024x!tt.ptr<f32>>
    tt.return
  }
}
// -----

// softmax(x * 0.5, -1): the NaN/inf flags of `any` are computed on vectors and stored
// as bytes, which the `any` reduces in lanes with arith.ori on vector<16xi8>;
// triton_helpers.max2's where-form maximum reduces in lanes as arith.maximumf; the
// tail's tl.where on the row's `any` flag (a byte, truncated) is a select of whole
// vectors on a scalar condition, then exp on vectors.
// CHECK-LABEL: func.func @triton_per_fused__softmax_abs_all_amax_eq_mul_ne_sub_0
// CHECK:           arith.cmpf une, {{.*}} : vector<16xf32>
// CHECK:           %[[BAD:.*]] = arith.extui %{{.*}} : vector<16xi1> to vector<16xi8>
// CHECK-NEXT:      vector.store %[[BAD]], %{{.*}} : memref<8x64x16xi8>, vector<16xi8>
// CHECK:       scf.for {{.*}} iter_args
// CHECK:         arith.ori {{.*}} : vector<16xi8>
// CHECK:       scf.for {{.*}} iter_args
// CHECK:         arith.maximumf {{.*}} : vector<16xf32>
// CHECK:           %[[BYTE:.*]] = memref.load %{{.*}}[%{{.*}}, %c0] : memref<8x1xi8>
// CHECK-NEXT:      vector.load {{.*}} : memref<8x1024xf32>, vector<16xf32>
// CHECK:           %[[FLAG:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extui %[[FLAG]] : i1 to i32
// CHECK-NEXT:      %[[NOT:.*]] = arith.cmpi eq, %[[WIDE]], %{{.*}} : i32
// CHECK-NEXT:      %[[PICK:.*]] = arith.select %[[NOT]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NEXT:      math.exp %[[PICK]] : vector<16xf32>
module {
  tt.func public @triton_per_fused__softmax_abs_all_amax_eq_mul_ne_sub_0(%in_out_ptr0: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %in_ptr0: !tt.ptr<f32>, %xnumel: i32 {tt.divisibility = 16 : i32}, %r0_numel: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %tmp20 = arith.constant dense<0> : tensor<8x1xi32>
    %tmp8 = arith.constant dense<0> : tensor<8x1024xi32>
    %tmp6 = arith.constant dense<0x7F800000> : tensor<8x1024xf32>
    %cst = arith.constant dense<5.000000e-01> : tensor<8x1024xf32>
    %cst_0 = arith.constant dense<1024> : tensor<8x1xi32>
    %xoffset = arith.constant 8 : i32
    %xoffset_1 = tt.get_program_id x : i32
    %xoffset_2 = arith.muli %xoffset_1, %xoffset : i32
    %xindex = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xindex_3 = tt.expand_dims %xindex {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
    %xindex_4 = tt.splat %xoffset_2 : i32 -> tensor<8x1xi32>
    %xindex_5 = arith.addi %xindex_4, %xindex_3 : tensor<8x1xi32>
    %r0_index = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %r0_index_6 = tt.expand_dims %r0_index {axis = 0 : i32} : tensor<1024xi32> -> tensor<1x1024xi32>
    %tmp0 = arith.muli %xindex_5, %cst_0 : tensor<8x1xi32>
    %tmp0_7 = tt.broadcast %r0_index_6 : tensor<1x1024xi32> -> tensor<8x1024xi32>
    %tmp0_8 = tt.broadcast %tmp0 : tensor<8x1xi32> -> tensor<8x1024xi32>
    %tmp0_9 = arith.addi %tmp0_7, %tmp0_8 : tensor<8x1024xi32>
    %tmp0_10 = tt.splat %in_ptr0 : !tt.ptr<f32> -> tensor<8x1024x!tt.ptr<f32>>
    %tmp0_11 = tt.addptr %tmp0_10, %tmp0_9 : tensor<8x1024x!tt.ptr<f32>>, tensor<8x1024xi32>
    %tmp0_12 = tt.load %tmp0_11 {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>} : tensor<8x1024x!tt.ptr<f32>>
    %tmp2 = arith.mulf %tmp0_12, %cst : tensor<8x1024xf32>
    %tmp3 = arith.cmpf oeq, %tmp2, %tmp2 : tensor<8x1024xf32>
    %tmp4 = math.absf %tmp2 : tensor<8x1024xf32>
    %tmp6_13 = arith.cmpf une, %tmp4, %tmp6 : tensor<8x1024xf32>
    %tmp7 = arith.andi %tmp3, %tmp6_13 : tensor<8x1024xi1>
    %tmp8_14 = arith.extui %tmp7 : tensor<8x1024xi1> to tensor<8x1024xi32>
    %tmp8_15 = arith.cmpi eq, %tmp8_14, %tmp8 : tensor<8x1024xi32>
    %tmp11 = "tt.reduce"(%tmp8_15) <{axis = 1 : i32}> ({
    ^bb0(%tmp11_26: i1, %tmp11_27: i1):
      %tmp11_28 = arith.ori %tmp11_26, %tmp11_27 : i1
      tt.reduce.return %tmp11_28 : i1
    }) : (tensor<8x1024xi1>) -> tensor<8xi1>
    %tmp11_16 = tt.expand_dims %tmp11 {axis = 1 : i32} : tensor<8xi1> -> tensor<8x1xi1>
    %tmp16 = "tt.reduce"(%tmp0_12) <{axis = 1 : i32}> ({
    ^bb0(%tmp16_26: f32, %tmp16_27: f32):
      %mask = arith.cmpf ogt, %tmp16_26, %tmp16_27 : f32
      %mask_28 = arith.cmpf une, %tmp16_26, %tmp16_26 : f32
      %mask_29 = arith.ori %mask, %mask_28 : i1
      %tmp16_30 = arith.select %mask_29, %tmp16_26, %tmp16_27 : f32
      tt.reduce.return %tmp16_30 : f32
    }) : (tensor<8x1024xf32>) -> tensor<8xf32>
    %tmp16_17 = tt.expand_dims %tmp16 {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %tmp19 = "tt.reduce"(%tmp2) <{axis = 1 : i32}> ({
    ^bb0(%tmp19_26: f32, %tmp19_27: f32):
      %mask = arith.cmpf ogt, %tmp19_26, %tmp19_27 : f32
      %mask_28 = arith.cmpf une, %tmp19_26, %tmp19_26 : f32
      %mask_29 = arith.ori %mask, %mask_28 : i1
      %tmp19_30 = arith.select %mask_29, %tmp19_26, %tmp19_27 : f32
      tt.reduce.return %tmp19_30 : f32
    }) : (tensor<8x1024xf32>) -> tensor<8xf32>
    %tmp19_18 = tt.expand_dims %tmp19 {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %tmp20_19 = arith.extui %tmp11_16 : tensor<8x1xi1> to tensor<8x1xi32>
    %tmp20_20 = arith.cmpi eq, %tmp20_19, %tmp20 : tensor<8x1xi32>
    %tmp21 = tt.broadcast %tmp16_17 : tensor<8x1xf32> -> tensor<8x1024xf32>
    %tmp21_21 = arith.subf %tmp0_12, %tmp21 : tensor<8x1024xf32>
    %tmp22 = arith.mulf %tmp21_21, %cst : tensor<8x1024xf32>
    %tmp23 = tt.broadcast %tmp19_18 : tensor<8x1xf32> -> tensor<8x1024xf32>
    %tmp23_22 = arith.subf %tmp2, %tmp23 : tensor<8x1024xf32>
    %tmp24 = tt.broadcast %tmp20_20 : tensor<8x1xi1> -> tensor<8x1024xi1>
    %tmp24_23 = arith.select %tmp24, %tmp22, %tmp23_22 : tensor<8x1024xi1>, tensor<8x1024xf32>
    %tmp25 = tt.extern_elementwise %tmp24_23 {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %tmp28 = "tt.reduce"(%tmp25) <{axis = 1 : i32}> ({
    ^bb0(%tmp28_26: f32, %tmp28_27: f32):
      %tmp28_28 = arith.addf %tmp28_26, %tmp28_27 : f32
      tt.reduce.return %tmp28_28 : f32
    }) : (tensor<8x1024xf32>) -> tensor<8xf32>
    %tmp28_24 = tt.expand_dims %tmp28 {axis = 1 : i32} : tensor<8xf32> -> tensor<8x1xf32>
    %tmp29 = tt.broadcast %tmp28_24 : tensor<8x1xf32> -> tensor<8x1024xf32>
    %tmp29_25 = arith.divf %tmp25, %tmp29 : tensor<8x1024xf32>
    %0 = tt.splat %in_out_ptr0 : !tt.ptr<f32> -> tensor<8x1024x!tt.ptr<f32>>
    %1 = tt.addptr %0, %tmp0_9 : tensor<8x1024x!tt.ptr<f32>>, tensor<8x1024xi32>
    tt.store %1, %tmp29_25 : tensor<8x1024x!tt.ptr<f32>>
    tt.return
  }
}
// -----

// argmax (x.argmax(-1)): Inductor's maximum_with_index combine of (value, index) pairs, a
// NaN the greatest and ties to the smaller index (a total order), runs in 16 lanes of
// pairs like the sums above (ttir_to_linalg/reductions.py, _lane_pair_combine), its
// NaN tests kept (not the NaN skipping of Triton's own tl.argmax).
// CHECK-LABEL: func.func @triton_per_fused_argmax_0
// CHECK:       memref<8x63x16xf32
// CHECK:       memref<8x63x16xi32
// CHECK:       arith.cmpf une
// CHECK:       scf.for {{.*}} = %c0 to %c15 step %c1
module {
  tt.func public @triton_per_fused_argmax_0(%in_ptr0: !tt.ptr<f32>, %out_ptr0: !tt.ptr<i64> {tt.divisibility = 16 : i32}, %xnumel: i32 {tt.divisibility = 16 : i32}, %r0_numel: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %true = arith.constant true
    %tmp0 = arith.constant dense<1024> : tensor<8x1xi32>
    %xoffset = arith.constant 8 : i32
    %xoffset_0 = tt.get_program_id x : i32
    %xoffset_1 = arith.muli %xoffset_0, %xoffset : i32
    %xindex = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xindex_2 = tt.expand_dims %xindex {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
    %xindex_3 = tt.splat %xoffset_1 : i32 -> tensor<8x1xi32>
    %xindex_4 = arith.addi %xindex_3, %xindex_2 : tensor<8x1xi32>
    %r0_index = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %r0_index_5 = tt.expand_dims %r0_index {axis = 0 : i32} : tensor<1024xi32> -> tensor<1x1024xi32>
    %tmp0_6 = arith.muli %xindex_4, %tmp0 : tensor<8x1xi32>
    %tmp0_7 = tt.broadcast %r0_index_5 : tensor<1x1024xi32> -> tensor<8x1024xi32>
    %tmp0_8 = tt.broadcast %tmp0_6 : tensor<8x1xi32> -> tensor<8x1024xi32>
    %tmp0_9 = arith.addi %tmp0_7, %tmp0_8 : tensor<8x1024xi32>
    %tmp0_10 = tt.splat %in_ptr0 : !tt.ptr<f32> -> tensor<8x1024x!tt.ptr<f32>>
    %tmp0_11 = tt.addptr %tmp0_10, %tmp0_9 : tensor<8x1024x!tt.ptr<f32>>, tensor<8x1024xi32>
    %tmp0_12 = tt.load %tmp0_11 {cachePolicy = #tt.cache_policy<cache_modifier = none, eviction_policy = evict_first>} : tensor<8x1024x!tt.ptr<f32>>
    %0:2 = "tt.reduce"(%tmp0_12, %tmp0_7) <{axis = 1 : i32}> ({
    ^bb0(%arg4: f32, %arg5: i32, %arg6: f32, %arg7: i32):
      %mask = arith.cmpf ogt, %arg4, %arg6 : f32
      %equal = arith.cmpf oeq, %arg4, %arg6 : f32
      %a_isnan = arith.cmpf une, %arg4, %arg4 : f32
      %b_isnan = arith.cmpf une, %arg6, %arg6 : f32
      %mask_13 = arith.xori %b_isnan, %true : i1
      %mask_14 = arith.andi %a_isnan, %mask_13 : i1
      %mask_15 = arith.ori %mask, %mask_14 : i1
      %equal_16 = arith.andi %a_isnan, %b_isnan : i1
      %equal_17 = arith.ori %equal, %equal_16 : i1
      %mask_18 = arith.cmpi slt, %arg5, %arg7 : i32
      %mask_19 = arith.andi %equal_17, %mask_18 : i1
      %mask_20 = arith.ori %mask_15, %mask_19 : i1
      %4 = arith.select %mask_20, %arg4, %arg6 : f32
      %5 = arith.select %mask_20, %arg5, %arg7 : i32
      tt.reduce.return %4, %5 : f32, i32
    }) : (tensor<8x1024xf32>, tensor<8x1024xi32>) -> (tensor<8xf32>, tensor<8xi32>)
    %tmp2 = tt.expand_dims %0#1 {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
    %1 = tt.splat %out_ptr0 : !tt.ptr<i64> -> tensor<8x1x!tt.ptr<i64>>
    %2 = tt.addptr %1, %xindex_4 : tensor<8x1x!tt.ptr<i64>>, tensor<8x1xi32>
    %3 = arith.extsi %tmp2 : tensor<8x1xi32> to tensor<8x1xi64>
    tt.store %2, %3 : tensor<8x1x!tt.ptr<i64>>
    tt.return
  }
}
