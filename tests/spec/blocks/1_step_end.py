import newch as torch
import newch.net as nn
import newch.net.functional as F

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4)                    # 임시 텐서: 이번 스텝에서만 씀
    target = torch.randn(8, 2)
    opt.zero_grad()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    print(step, loss.item())                 # 값은 step_end() 전에 꺼냅니다
    torch.step_end()                         # 이 스텝의 임시 텐서를 모두 해제
