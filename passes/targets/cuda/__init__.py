"""cuda: measured matmul configs (cuda_matmul_configs) and the warning of a
reduction IREE 3.13's CUDA code gets wrong (cuda_maxsi_warning)."""
