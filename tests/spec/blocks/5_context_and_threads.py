ctx = torch.Context(seed=1, threads=2)       # threads=0(기본)은 모든 코어
torch.set_default_context(ctx)
print(ctx.threads, ctx.backend)              # 쓰는 스레드 수와 커널 (avx2, neon, ref)
