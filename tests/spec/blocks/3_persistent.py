with torch.persistent():
    dataset_x = torch.randn(100, 4)
    mean = dataset_x.mean(0)
torch.step_end()
print(mean.shape)            # 아직 살아 있음
torch.release(dataset_x)     # 다 썼으면 바로 해제할 수도 있습니다 (안 하면 참조가 사라질 때 해제)
