"""Run torch's real CUDA capability checks with the hardware faked (CPU machine): a CC 12.0 GPU
(RTX 5090) under a torch whose CUDA build only has kernels up to sm_90 (as torch 2.5 cu124 wheels)."""
import warnings, torch, torch.cuda as tc
torch.version.cuda = "12.4"
tc.get_arch_list = lambda: ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
tc.device_count = lambda: 1
tc.get_device_capability = lambda d=None: (12, 0)
tc.get_device_name = lambda d=None: "NVIDIA GeForce RTX 5090"
warnings.simplefilter("always")
tc._check_capability()
tc._check_cubins()
