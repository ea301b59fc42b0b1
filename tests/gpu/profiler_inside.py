"""profiler_inside.py - a program that profiles itself with torch.profiler:
prints how many CUDA kernel events torch.profiler saw, and which libcupti
copies are mapped (under xpcap, the injection library holds CUPTI first).
  python3 tests/gpu/profiler_inside.py"""
import torch
from torch.profiler import profile, ProfilerActivity

x = torch.randn(512, 512, device="cuda")
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(20):
        x = torch.relu(x @ x / 512)
    torch.cuda.synchronize()
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("torch.profiler CUDA events:", len(kernels))
with open("/proc/self/maps") as f:
    print("libcupti mapped:", sorted({l.split()[-1] for l in f if "libcupti" in l}))
