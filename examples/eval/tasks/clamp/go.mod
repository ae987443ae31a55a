module example.com/clamp

go 1.22
