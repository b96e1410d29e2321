// hello: goroutines, channels, a WaitGroup and time.Sleep (the Go runtime's timers and netpoller at start).
// Prints fixed lines, so its output compares equal natively and under pvx.
package main

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	fmt.Println("hello from Go")
	start := time.Now()
	time.Sleep(50 * time.Millisecond)
	fmt.Println("slept at least 50 ms:", time.Since(start) >= 50*time.Millisecond)

	var wg sync.WaitGroup
	results := make([]int, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(8-i) * time.Millisecond)
			results[i] = i * i
		}(i)
	}
	wg.Wait()
	fmt.Println("goroutine results:", results)

	ch := make(chan int)
	go func() {
		for i := 1; i <= 3; i++ {
			ch <- i
		}
		close(ch)
	}()
	sum := 0
	for v := range ch {
		sum += v
	}
	fmt.Println("channel sum:", sum)

	timer := time.NewTimer(200 * time.Millisecond)
	ticker := time.NewTicker(5 * time.Millisecond)
	ticks := 0
loop:
	for {
		select {
		case <-ticker.C:
			ticks++
		case <-timer.C:
			break loop
		}
	}
	ticker.Stop()
	fmt.Println("ticker ticked before the timer:", ticks > 0)
	select {
	case <-time.After(10 * time.Millisecond):
		fmt.Println("time.After fired")
	}
}
