module keyward.dev/sdk/go/keyward

go 1.19
