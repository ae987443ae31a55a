module example.com/last

go 1.22
