module example.com/fakecellttl

go 1.22
