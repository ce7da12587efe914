// A toy decoder of two layers in the form an export of a generation loop
// takes: weights @w0, @w1 (4x4 f32, 64 B each) and a K cache per layer,
// @k0 and @k1 (mutable, 1x8x4 f32, 128 B each: 8 positions of context),
// shared by two public functions. Per layer, h = x @ W, the cache takes h
// at the call's positions (tensor.insert_slice into the loaded global,
// stored back) and y = tanh(h + the sum of the cache's rows up to there).
// @prefill(x: 1xTx4, T <= 8 given by --max-dim=arg0.d1) writes positions
// 0..T-1 and sums the whole cache; @decode(x: 1x1x4, pos: 1xi64) writes
// position pos and sums rows 0..pos (a slice of the cache).
// Units of each function, in order: 0 collapse, 1 matmul by @w0, 2 expand,
// 3 insert_slice into @k0, 4 store @k0, (decode: extract_slice,) sum, tanh;
// then layer 1 the same.
// Both caches start at 0.0: stock IREE 3.13 would give them one buffer
// (every store to @k1 also changed @k0), which mdc's state-initial-values
// pass prevents (docs/DESIGN.md, section 8).
module {
  util.global private @w0 = dense<[[0.5, -0.25, 0.125, 0.0], [0.25, 0.5, -0.5, 0.125], [-0.125, 0.25, 0.5, 0.25], [0.0, -0.5, 0.25, 0.5]]> : tensor<4x4xf32>
  util.global private @w1 = dense<[[0.25, 0.5, -0.125, 0.5], [-0.5, 0.25, 0.0, 0.25], [0.125, -0.25, 0.5, 0.0], [0.5, 0.125, 0.25, -0.25]]> : tensor<4x4xf32>
  util.global private mutable @k0 = dense<0.0> : tensor<1x8x4xf32>
  util.global private mutable @k1 = dense<0.0> : tensor<1x8x4xf32>
  util.func public @prefill(%x: tensor<1x?x4xf32>) -> tensor<1x?x4xf32> {
    %zero = arith.constant 0.0 : f32
    %c1 = arith.constant 1 : index
    %n = tensor.dim %x, %c1 : tensor<1x?x4xf32>
    %l0_x = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x?x4xf32> into tensor<?x4xf32>
    %l0_e = tensor.empty(%n) : tensor<?x4xf32>
    %l0_acc = linalg.fill ins(%zero : f32) outs(%l0_e : tensor<?x4xf32>) -> tensor<?x4xf32>
    %l0_w = util.global.load @w0 : tensor<4x4xf32>
    %l0_h = linalg.matmul ins(%l0_x, %l0_w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%l0_acc : tensor<?x4xf32>) -> tensor<?x4xf32>
    %l0_h3 = tensor.expand_shape %l0_h [[0, 1], [2]] output_shape [1, %n, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
    %l0_k = util.global.load @k0 : tensor<1x8x4xf32>
    %l0_k2 = tensor.insert_slice %l0_h3 into %l0_k[0, 0, 0] [1, %n, 4] [1, 1, 1] : tensor<1x?x4xf32> into tensor<1x8x4xf32>
    util.global.store %l0_k2, @k0 : tensor<1x8x4xf32>
    %l0_z = tensor.empty() : tensor<1x4xf32>
    %l0_zf = linalg.fill ins(%zero : f32) outs(%l0_z : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l0_sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%l0_k2 : tensor<1x8x4xf32>) outs(%l0_zf : tensor<1x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<1x4xf32>
    %l0_ye = tensor.empty(%n) : tensor<1x?x4xf32>
    %l0_y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%l0_h3, %l0_sum : tensor<1x?x4xf32>, tensor<1x4xf32>) outs(%l0_ye : tensor<1x?x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %u = math.tanh %s : f32
      linalg.yield %u : f32
    } -> tensor<1x?x4xf32>
    %l1_x = tensor.collapse_shape %l0_y [[0, 1], [2]] : tensor<1x?x4xf32> into tensor<?x4xf32>
    %l1_e = tensor.empty(%n) : tensor<?x4xf32>
    %l1_acc = linalg.fill ins(%zero : f32) outs(%l1_e : tensor<?x4xf32>) -> tensor<?x4xf32>
    %l1_w = util.global.load @w1 : tensor<4x4xf32>
    %l1_h = linalg.matmul ins(%l1_x, %l1_w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%l1_acc : tensor<?x4xf32>) -> tensor<?x4xf32>
    %l1_h3 = tensor.expand_shape %l1_h [[0, 1], [2]] output_shape [1, %n, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
    %l1_k = util.global.load @k1 : tensor<1x8x4xf32>
    %l1_k2 = tensor.insert_slice %l1_h3 into %l1_k[0, 0, 0] [1, %n, 4] [1, 1, 1] : tensor<1x?x4xf32> into tensor<1x8x4xf32>
    util.global.store %l1_k2, @k1 : tensor<1x8x4xf32>
    %l1_z = tensor.empty() : tensor<1x4xf32>
    %l1_zf = linalg.fill ins(%zero : f32) outs(%l1_z : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l1_sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%l1_k2 : tensor<1x8x4xf32>) outs(%l1_zf : tensor<1x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<1x4xf32>
    %l1_ye = tensor.empty(%n) : tensor<1x?x4xf32>
    %l1_y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%l1_h3, %l1_sum : tensor<1x?x4xf32>, tensor<1x4xf32>) outs(%l1_ye : tensor<1x?x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %u = math.tanh %s : f32
      linalg.yield %u : f32
    } -> tensor<1x?x4xf32>
    util.return %l1_y : tensor<1x?x4xf32>
  }
  util.func public @decode(%x: tensor<1x1x4xf32>, %pos: tensor<1xi64>) -> tensor<1x1x4xf32> {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %pi = tensor.extract %pos[%c0] : tensor<1xi64>
    %p = arith.index_cast %pi : i64 to index
    %len = arith.addi %p, %c1 : index
    %l0_x = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x1x4xf32> into tensor<1x4xf32>
    %l0_e = tensor.empty() : tensor<1x4xf32>
    %l0_acc = linalg.fill ins(%zero : f32) outs(%l0_e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l0_w = util.global.load @w0 : tensor<4x4xf32>
    %l0_h = linalg.matmul ins(%l0_x, %l0_w : tensor<1x4xf32>, tensor<4x4xf32>) outs(%l0_acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l0_h3 = tensor.expand_shape %l0_h [[0, 1], [2]] output_shape [1, 1, 4] : tensor<1x4xf32> into tensor<1x1x4xf32>
    %l0_k = util.global.load @k0 : tensor<1x8x4xf32>
    %l0_k2 = tensor.insert_slice %l0_h3 into %l0_k[0, %p, 0] [1, 1, 4] [1, 1, 1] : tensor<1x1x4xf32> into tensor<1x8x4xf32>
    util.global.store %l0_k2, @k0 : tensor<1x8x4xf32>
    %l0_seen = tensor.extract_slice %l0_k2[0, 0, 0] [1, %len, 4] [1, 1, 1] : tensor<1x8x4xf32> to tensor<1x?x4xf32>
    %l0_z = tensor.empty() : tensor<1x4xf32>
    %l0_zf = linalg.fill ins(%zero : f32) outs(%l0_z : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l0_sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%l0_seen : tensor<1x?x4xf32>) outs(%l0_zf : tensor<1x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<1x4xf32>
    %l0_ye = tensor.empty() : tensor<1x1x4xf32>
    %l0_y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%l0_h3, %l0_sum : tensor<1x1x4xf32>, tensor<1x4xf32>) outs(%l0_ye : tensor<1x1x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %u = math.tanh %s : f32
      linalg.yield %u : f32
    } -> tensor<1x1x4xf32>
    %l1_x = tensor.collapse_shape %l0_y [[0, 1], [2]] : tensor<1x1x4xf32> into tensor<1x4xf32>
    %l1_e = tensor.empty() : tensor<1x4xf32>
    %l1_acc = linalg.fill ins(%zero : f32) outs(%l1_e : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l1_w = util.global.load @w1 : tensor<4x4xf32>
    %l1_h = linalg.matmul ins(%l1_x, %l1_w : tensor<1x4xf32>, tensor<4x4xf32>) outs(%l1_acc : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l1_h3 = tensor.expand_shape %l1_h [[0, 1], [2]] output_shape [1, 1, 4] : tensor<1x4xf32> into tensor<1x1x4xf32>
    %l1_k = util.global.load @k1 : tensor<1x8x4xf32>
    %l1_k2 = tensor.insert_slice %l1_h3 into %l1_k[0, %p, 0] [1, 1, 4] [1, 1, 1] : tensor<1x1x4xf32> into tensor<1x8x4xf32>
    util.global.store %l1_k2, @k1 : tensor<1x8x4xf32>
    %l1_seen = tensor.extract_slice %l1_k2[0, 0, 0] [1, %len, 4] [1, 1, 1] : tensor<1x8x4xf32> to tensor<1x?x4xf32>
    %l1_z = tensor.empty() : tensor<1x4xf32>
    %l1_zf = linalg.fill ins(%zero : f32) outs(%l1_z : tensor<1x4xf32>) -> tensor<1x4xf32>
    %l1_sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%l1_seen : tensor<1x?x4xf32>) outs(%l1_zf : tensor<1x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<1x4xf32>
    %l1_ye = tensor.empty() : tensor<1x1x4xf32>
    %l1_y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%l1_h3, %l1_sum : tensor<1x1x4xf32>, tensor<1x4xf32>) outs(%l1_ye : tensor<1x1x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %u = math.tanh %s : f32
      linalg.yield %u : f32
    } -> tensor<1x1x4xf32>
    util.return %l1_y : tensor<1x1x4xf32>
  }
}
