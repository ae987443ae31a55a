module example.com/mean

go 1.22
