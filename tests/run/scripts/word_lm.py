#!/usr/bin/env python
"""A word-level LSTM language model in the shape of pytorch/examples' word_language_model."""
import argparse
import math
import os

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description="word-level LSTM language model")
parser.add_argument("--data", default="corpus.txt")
parser.add_argument("--emsize", type=int, default=32)
parser.add_argument("--nhid", type=int, default=32)
parser.add_argument("--nlayers", type=int, default=2)
parser.add_argument("--lr", type=float, default=20)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--bptt", type=int, default=8)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--seed", type=int, default=1111)
parser.add_argument("--log-interval", type=int, default=5)
parser.add_argument("--dry-run", action="store_true")
args = parser.parse_args()
torch.manual_seed(args.seed)
device = torch.device("cpu")


class Corpus:
    def __init__(self, path):
        self.word2idx, self.idx2word = {}, []
        ids = []
        with open(path) as f:
            for line in f:
                for word in line.split() + ["<eos>"]:
                    if word not in self.word2idx:
                        self.word2idx[word] = len(self.idx2word)
                        self.idx2word.append(word)
                    ids.append(self.word2idx[word])
        n = len(ids)
        cut = int(n * 0.8)
        self.train = torch.tensor(ids[:cut], dtype=torch.int64)
        self.valid = torch.tensor(ids[cut:], dtype=torch.int64)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous().to(device)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


corpus = Corpus(args.data)
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, 2)
ntokens = len(corpus.idx2word)
model = RNNModel(ntokens, args.emsize, args.nhid, args.nlayers, args.dropout).to(device)
criterion = nn.NLLLoss()


def evaluate(data_source):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(2)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(epoch):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-args.lr)
        total_loss += loss.item()
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            print(f"| epoch {epoch:3d} | {batch:5d}/{len(train_data) // args.bptt:5d} batches | "
                  f"lr {args.lr:02.2f} | loss {cur_loss:5.2f} | ppl {math.exp(cur_loss):8.2f}")
            total_loss = 0
        if args.dry_run:
            break


for epoch in range(1, args.epochs + 1):
    train(epoch)
    val_loss = evaluate(val_data)
    print("-" * 89)
    print(f"| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | valid ppl {math.exp(val_loss):8.2f}")
    print("-" * 89)
print("vocabulary", ntokens, "words")
