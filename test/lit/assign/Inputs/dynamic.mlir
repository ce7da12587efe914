// One dynamic dimension: an argument's, arg0.d0 for --max-dim.
module {
  util.func public @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %e = math.exp %x : tensor<?x4xf32>
    %n = arith.negf %e : tensor<?x4xf32>
    util.return %n : tensor<?x4xf32>
  }
}
